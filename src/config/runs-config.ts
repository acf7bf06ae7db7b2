import { Transform } from 'class-transformer';
import { IsBoolean, IsInt, Max, Min } from 'class-validator';
import { configSection, toBool, toInt } from './config-section';

/** The browser session runs section's variables (CONTRACT.md, "Configuration (environment)"). */
class RunsVariables {
  @Transform(toInt) @IsInt() @Min(0) @Max(32) RUN_CONCURRENCY = 1;
  @Transform(toBool) @IsBoolean() RUNS_ALLOW_EVALUATE = true;
}

/** Browser session runs' part of `AppConfig`. */
export interface RunsConfig {
  /** Browser session runs at once per worker process (0: this process runs none). */
  runConcurrency: number;
  /** Whether `evaluate` steps are accepted in runs (false: 400 `VALIDATION_FAILED`). */
  runsAllowEvaluate: boolean;
}

/** The browser session runs section (docs/configuration.md). */
export const runsSection = configSection({
  variables: RunsVariables,
  read: (raw): RunsConfig => ({
    runConcurrency: raw.RUN_CONCURRENCY,
    runsAllowEvaluate: raw.RUNS_ALLOW_EVALUATE,
  }),
});
