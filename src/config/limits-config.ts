import { Transform } from 'class-transformer';
import { IsInt, Max, Min } from 'class-validator';
import { configSection, toInt } from './config-section';

/** The limits section's variables (CONTRACT.md, "Configuration (environment)", "Quotas", "Rate limits and back-pressure"). */
class LimitsVariables {
  @Transform(toInt) @IsInt() @Min(0) @Max(100000) RATE_LIMIT_PER_SECOND = 0;
  @Transform(toInt) @IsInt() @Min(1) @Max(100000000) MAX_PENDING_JOBS_PER_ACCOUNT = 10000;
  @Transform(toInt) @IsInt() @Min(0) LEGACY_FREE_CAP = 1000;
}

/** The per-key and per-account limits' part of `AppConfig`. */
export interface LimitsConfig {
  /**
   * Requests per second per API key on `/v1/*` and the MCP endpoint, shared through Redis, bursts up to
   * twice that; 0: off (CONTRACT.md, "Rate limits and back-pressure").
   */
  rateLimitPerSecond: number;
  /** Capture jobs and runs not yet ended that one account may have; more is 429 `TOO_MANY_PENDING_JOBS`. */
  maxPendingJobsPerAccount: number;
  legacyFreeCap: number;
}

/** The limits section (docs/configuration.md). */
export const limitsSection = configSection({
  variables: LimitsVariables,
  read: (raw): LimitsConfig => ({
    rateLimitPerSecond: raw.RATE_LIMIT_PER_SECOND,
    maxPendingJobsPerAccount: raw.MAX_PENDING_JOBS_PER_ACCOUNT,
    legacyFreeCap: raw.LEGACY_FREE_CAP,
  }),
});
