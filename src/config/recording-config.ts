import { Transform } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { existsSync } from 'node:fs';
import { configSection, toInt } from './config-section';

/** Where `FFMPEG_PATH` is looked for when unset; otherwise `ffmpeg` is looked up on `PATH` when a recording starts. */
export const FFMPEG_CANDIDATES = ['/usr/bin/ffmpeg', '/usr/local/bin/ffmpeg'];

/** The recording section's variables: the encoder of run videos and animated captures (CONTRACT.md, "Animated captures"). */
class RecordingVariables {
  @IsOptional() @IsString() FFMPEG_PATH?: string;
  /** Largest animated GIF, bytes (CONTRACT.md, "Animated captures": default 15 MiB). */
  @Transform(toInt) @IsInt() @Min(65536) @Max(1073741824) GIF_MAX_BYTES = 15 * 1024 * 1024;
}

/** The recorder's part of `AppConfig`. */
export interface RecordingConfig {
  /** Path of the `ffmpeg` that encodes run videos and animated captures (Debian's package by default). */
  ffmpegPath: string;
  /** Largest GIF of an animated capture, bytes: a larger one is encoded again at a lower frame rate, then a smaller scale, then fails. */
  gifMaxBytes: number;
}

/** The recording section (docs/configuration.md). */
export const recordingSection = configSection({
  variables: RecordingVariables,
  read: (raw): RecordingConfig => ({
    ffmpegPath: raw.FFMPEG_PATH ?? FFMPEG_CANDIDATES.find((p) => existsSync(p)) ?? 'ffmpeg',
    gifMaxBytes: raw.GIF_MAX_BYTES,
  }),
});
