import { readFileSync } from 'node:fs';
import { captureSection, CaptureConfig } from './capture-config';
import { ConfigSection, SectionContext, sectionVariableNames, validateSection } from './config-section';
import { dashboardSection, DashboardConfig } from './dashboard-config';
import { databaseSection, DatabaseConfig } from './database-config';
import { limitsSection, LimitsConfig } from './limits-config';
import { monitorsSection, MonitorsConfig } from './monitors-config';
import { recordingSection, RecordingConfig } from './recording-config';
import { redisSection, RedisConfig } from './redis-config';
import { renderSection, RenderConfig } from './render-config';
import { runsSection, RunsConfig } from './runs-config';
import { serverSection, ServerConfig } from './server-config';
import { storageSection, StorageConfig } from './storage-config';
import { webhooksSection, WebhooksConfig } from './webhooks-config';

export { cgroupCpuLimit, defaultCaptureConcurrency, usableCores } from './capture-config';
export { dashboardUrlOf } from './dashboard-config';
export { FFMPEG_CANDIDATES } from './recording-config';
export type { S3Config } from './storage-config';

/**
 * The configuration's sections (docs/configuration.md; names and defaults follow CONTRACT.md,
 * "Configuration (environment)"), each a module owning its variables, their validation and its typed
 * part of {@link AppConfig}. Problems are reported in this order: every variable's validation, then
 * each section's own checks.
 */
const SECTIONS = [
  serverSection,
  databaseSection,
  redisSection,
  storageSection,
  captureSection,
  recordingSection,
  runsSection,
  webhooksSection,
  monitorsSection,
  renderSection,
  dashboardSection,
  limitsSection,
] as const;

/**
 * Typed, validated configuration, read once at boot: the sections' parts composed. Units are in the
 * field names (ms, s, days).
 */
export type AppConfig = ServerConfig &
  DatabaseConfig &
  RedisConfig &
  StorageConfig &
  CaptureConfig &
  RecordingConfig &
  RunsConfig &
  WebhooksConfig &
  MonitorsConfig &
  RenderConfig &
  DashboardConfig &
  LimitsConfig;

/**
 * Variables that may instead be read from a file named by `<NAME>_FILE` (the Docker and Kubernetes
 * secrets convention); the file's content without its trailing newline is the value.
 */
export const FILE_SECRETS = [
  'DATABASE_URL',
  'WEBHOOK_SECRET_KEY',
  'WEBHOOK_SECRET_KEYS',
  'S3_SECRET_ACCESS_KEY',
  'EGRESS_PROXIES',
  'METRICS_TOKEN',
  'ADMIN_TOKEN',
] as const;

/**
 * Every environment variable the service reads (validated ones and the `<NAME>_FILE` forms), for
 * checks of deployment files (Dockerfile, compose, Helm chart) against the configuration.
 */
export function environmentVariableNames(): string[] {
  const names = SECTIONS.flatMap((section) => sectionVariableNames(section.variables));
  return [...new Set([...names, ...FILE_SECRETS.map((n) => `${n}_FILE`)])].sort();
}

/** Thrown by {@link loadConfig}; `problems` holds one readable line per invalid variable. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

/** Injection token of the {@link AppConfig}. */
export const APP_CONFIG = Symbol('APP_CONFIG');

/**
 * Validates an environment and returns the typed configuration.
 * Empty strings count as unset; `<NAME>_FILE` supplies a {@link FILE_SECRETS} variable from a file.
 * `stdoutIsTerminal` picks the default `LOG_FORMAT`. Throws {@link ConfigError} listing every problem at once.
 */
export function loadConfig(env: Record<string, string | undefined>, stdoutIsTerminal = false): AppConfig {
  const present: Record<string, string> = Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== ''),
  );
  const problems: string[] = [];
  for (const name of FILE_SECRETS) {
    const file = present[`${name}_FILE`];
    if (!file) continue;
    if (present[name] !== undefined) {
      problems.push(`${name}_FILE: set either ${name} or ${name}_FILE, not both`);
      continue;
    }
    try {
      present[name] = readFileSync(file, 'utf8').replace(/\r?\n$/, '');
    } catch (err) {
      problems.push(`${name}_FILE=${JSON.stringify(file)}: cannot read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  }
  const validated = SECTIONS.map((section) => {
    const { raw, problems: invalid } = validateSection(section.variables as new () => object, present);
    problems.push(...invalid);
    return raw;
  });
  const context: SectionContext = { env, problems, production: present.NODE_ENV === 'production', stdoutIsTerminal };
  const parts = SECTIONS.map((section, i) => (section as ConfigSection<object, object>).read(validated[i], context));
  if (problems.length) throw new ConfigError(problems);
  return Object.assign({}, ...parts) as AppConfig;
}

/** The process's configuration from `process.env`; the only reader of `process.env` in the service. */
export function loadConfigFromProcessEnv(): AppConfig {
  return loadConfig(process.env, process.stdout.isTTY === true);
}
