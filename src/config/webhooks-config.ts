import { Transform } from 'class-transformer';
import { IsBoolean, IsInt, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import { configSection, toBool, toInt } from './config-section';

/** One webhook secret key: 32 bytes as 64 hex characters or 44 base64 characters. */
const SECRET_KEY_PATTERN = /^([0-9a-fA-F]{64}|[A-Za-z0-9+/]{43}=)$/;

/** The webhooks section's variables (CONTRACT.md, "Configuration (environment)" and "Webhooks"). */
class WebhooksVariables {
  @Transform(toBool) @IsBoolean() WEBHOOK_ALLOW_HTTP = false;
  @IsString()
  @Matches(/^\s*\d+(\.\d+)?(\s*,\s*\d+(\.\d+)?)*\s*$/, { message: 'must be a comma-separated list of seconds' })
  WEBHOOK_RETRY_DELAYS = '60,300,1800,7200,43200';
  @Transform(toInt) @IsInt() @Min(100) @Max(120000) WEBHOOK_TIMEOUT_MS = 15000;
  @Transform(toInt) @IsInt() @Min(1) @Max(31536000) WEBHOOK_DISABLE_AFTER_S = 432000;
  @IsOptional()
  @IsString()
  @Matches(SECRET_KEY_PATTERN, { message: 'must be 32 bytes as 64 hex characters or base64 (44 characters)' })
  WEBHOOK_SECRET_KEY?: string;
  /** Comma-separated keys, newest first: the first seals, every one opens (key rotation). */
  @IsOptional()
  @IsString()
  @Matches(/^\s*[^,\s]+(\s*,\s*[^,\s]+)*\s*$/, { message: 'must be a comma-separated list of keys' })
  WEBHOOK_SECRET_KEYS?: string;
}

/** Webhooks' part of `AppConfig`. Units are in the field names (ms, s). */
export interface WebhooksConfig {
  webhookAllowHttp: boolean;
  /** Delays between webhook attempts, in seconds (attempt n+1 waits `webhookRetryDelaysS[n-1]`). */
  webhookRetryDelaysS: number[];
  webhookTimeoutMs: number;
  /**
   * An endpoint without a successful attempt for this many seconds, with an `exhausted` delivery in
   * that time, is disabled with reason `failing` (CONTRACT.md "Webhooks", default 432,000: 5 days).
   */
  webhookDisableAfterS: number;
  /**
   * AES-256-GCM keys (32 bytes each) for webhook signing secrets at rest, newest first: the first seals,
   * every one opens (rotation). From `WEBHOOK_SECRET_KEYS` (comma-separated) or `WEBHOOK_SECRET_KEY`
   * (one key), 64 hex characters or base64 each. Empty when neither is set: secrets are then stored
   * unencrypted and a warning is logged at start-up (docs/webhooks.md#configuration); refused in production.
   */
  webhookSecretKeys: Buffer[];
}

/** The webhooks section (docs/configuration.md): with `NODE_ENV=production` a secret key is required. */
export const webhooksSection = configSection({
  variables: WebhooksVariables,
  read(raw, { problems, production }): WebhooksConfig {
    const webhookSecretKeys = parseSecretKeys(raw.WEBHOOK_SECRET_KEYS, raw.WEBHOOK_SECRET_KEY, problems);
    if (production && !webhookSecretKeys.length && !problems.some((p) => p.startsWith('WEBHOOK_SECRET_KEY'))) {
      problems.push(
        'WEBHOOK_SECRET_KEY: required with NODE_ENV=production (32 random bytes, e.g. `openssl rand -hex 32`), so webhook signing secrets are encrypted at rest',
      );
    }
    return {
      webhookAllowHttp: raw.WEBHOOK_ALLOW_HTTP,
      webhookRetryDelaysS: raw.WEBHOOK_RETRY_DELAYS.split(',').map((s) => Number(s.trim())),
      webhookTimeoutMs: raw.WEBHOOK_TIMEOUT_MS,
      webhookDisableAfterS: raw.WEBHOOK_DISABLE_AFTER_S,
      webhookSecretKeys,
    };
  },
});

/**
 * The webhook secret keys, newest first, from `WEBHOOK_SECRET_KEYS` (comma-separated) or else
 * `WEBHOOK_SECRET_KEY`; appends a line to `problems` for each malformed key, for both set at once and
 * for a key listed twice.
 */
function parseSecretKeys(list: string | undefined, single: string | undefined, problems: string[]): Buffer[] {
  if (list !== undefined && single !== undefined) {
    problems.push('WEBHOOK_SECRET_KEY and WEBHOOK_SECRET_KEYS: set only one (WEBHOOK_SECRET_KEYS=<new>,<old> to rotate)');
    return [];
  }
  if (list === undefined) return single !== undefined && SECRET_KEY_PATTERN.test(single) ? [decodeSecretKey(single)] : [];
  const entries = list
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean);
  const keys: Buffer[] = [];
  entries.forEach((entry, i) => {
    if (!SECRET_KEY_PATTERN.test(entry)) {
      problems.push(`WEBHOOK_SECRET_KEYS: key ${i + 1} must be 32 bytes as 64 hex characters or base64 (44 characters)`);
    } else if (keys.some((k) => k.equals(decodeSecretKey(entry)))) {
      problems.push(`WEBHOOK_SECRET_KEYS: key ${i + 1} is listed twice`);
    } else {
      keys.push(decodeSecretKey(entry));
    }
  });
  return keys;
}

function decodeSecretKey(key: string): Buffer {
  return Buffer.from(key, key.length === 64 ? 'hex' : 'base64');
}
