import { Transform } from 'class-transformer';
import { IsBoolean, IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { existsSync } from 'node:fs';
import { configSection, toBool, toInt } from './config-section';

/** Where `FFMPEG_PATH` is looked for when unset; otherwise `ffmpeg` is looked up on `PATH` when a run starts. */
export const FFMPEG_CANDIDATES = ['/usr/bin/ffmpeg', '/usr/local/bin/ffmpeg'];

/** The browser session runs section's variables (CONTRACT.md, "Configuration (environment)"). */
class RunsVariables {
  @IsOptional() @IsString() FFMPEG_PATH?: string;
  @Transform(toInt) @IsInt() @Min(0) @Max(32) RUN_CONCURRENCY = 1;
  @Transform(toBool) @IsBoolean() RUNS_ALLOW_EVALUATE = true;
}

/** Browser session runs' part of `AppConfig`. */
export interface RunsConfig {
  /** Path of the `ffmpeg` that encodes browser session run videos (Debian's package by default). */
  ffmpegPath: string;
  /** Browser session runs at once per worker process (0: this process runs none). */
  runConcurrency: number;
  /** Whether `evaluate` steps are accepted in runs (false: 400 `VALIDATION_FAILED`). */
  runsAllowEvaluate: boolean;
}

/** The browser session runs section (docs/configuration.md). */
export const runsSection = configSection({
  variables: RunsVariables,
  read: (raw): RunsConfig => ({
    ffmpegPath: raw.FFMPEG_PATH ?? FFMPEG_CANDIDATES.find((p) => existsSync(p)) ?? 'ffmpeg',
    runConcurrency: raw.RUN_CONCURRENCY,
    runsAllowEvaluate: raw.RUNS_ALLOW_EVALUATE,
  }),
});
