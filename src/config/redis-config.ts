import { IsString, Matches } from 'class-validator';
import { configSection } from './config-section';

/** The Redis section's variables (CONTRACT.md, "Configuration (environment)"). */
class RedisVariables {
  @IsString()
  @Matches(/^rediss?:\/\//, { message: 'must be a redis:// URL' })
  REDIS_URL = 'redis://127.0.0.1:6379';
  @IsString()
  @Matches(/^[A-Za-z0-9_:-]{1,64}$/, { message: 'must be 1-64 characters of [A-Za-z0-9_:-]' })
  QUEUE_PREFIX = 'glimpse';
}

/** Redis's part of `AppConfig`. */
export interface RedisConfig {
  redisUrl: string;
  /** Bull key prefix; every queue of this deployment lives under it. */
  queuePrefix: string;
}

/** The Redis section (docs/configuration.md). */
export const redisSection = configSection({
  variables: RedisVariables,
  read: (raw): RedisConfig => ({ redisUrl: raw.REDIS_URL, queuePrefix: raw.QUEUE_PREFIX }),
});
