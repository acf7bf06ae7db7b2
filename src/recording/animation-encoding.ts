import { stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { AnimationFormat } from '../results/result-formats';
import { VIDEO_ENCODINGS } from './encodings';
import { runFfmpeg } from './ffmpeg';
import type { Recording } from './screencast-recorder';

/** Lowest frame rate the GIF size cap's first fallback goes down to, frames per second. */
const GIF_MIN_FPS = 5;

/** Scale of the GIF size cap's last fallback (half the width and height: a quarter of the pixels). */
const GIF_FALLBACK_SCALE = 0.5;

/** An animation over its size cap after every fallback (CONTRACT.md, "Animated captures": `GIF_MAX_BYTES`). */
export class AnimationTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`animation larger than ${maxBytes} bytes`);
  }
}

/** What {@link encodeAnimation} makes of a recording. Sizes in px. */
export interface AnimationEncodeOptions {
  ffmpegPath: string;
  format: AnimationFormat;
  /** The viewport: the video's size at scale 1. */
  width: number;
  height: number;
  /** Largest GIF, bytes (`GIF_MAX_BYTES`). */
  gifMaxBytes: number;
  /** Longest one ffmpeg pass may take, ms. */
  passTimeoutMs: number;
}

/** An encoded animation, beside the recording's frames (removed with the recording). */
export interface EncodedAnimation {
  path: string;
  /** Bytes. */
  size: number;
  /** Frames per second and scale it was encoded at (below the recording's: a GIF's fallbacks). */
  fps: number;
  scale: number;
}

/**
 * Encodes a recording of frames (a {@link Recording} of `frames` output) as MP4, WebM or GIF with the
 * entries of {@link VIDEO_ENCODINGS} (CONTRACT.md, "Animated captures"). A GIF over `gifMaxBytes` is
 * encoded again at a lower frame rate (half, at least 5 fps), then also at half the width and height;
 * still over: {@link AnimationTooLargeError}. Throws `VideoEncodingError` when ffmpeg fails. ffmpeg
 * reads the frames from the file, so memory stays bounded whatever the animation's length.
 */
export async function encodeAnimation(recording: Recording, options: AnimationEncodeOptions): Promise<EncodedAnimation> {
  const encoding = VIDEO_ENCODINGS[options.format];
  const lowerFps = Math.max(GIF_MIN_FPS, Math.floor(recording.fps / 2));
  const attempts =
    options.format !== 'gif'
      ? [{ fps: recording.fps, scale: 1 }]
      : [
          { fps: recording.fps, scale: 1 },
          ...(lowerFps < recording.fps ? [{ fps: lowerFps, scale: 1 }] : []),
          { fps: lowerFps, scale: GIF_FALLBACK_SCALE },
        ];
  const dir = dirname(recording.path);
  for (const [index, attempt] of attempts.entries()) {
    const output = join(dir, `animation-${index}.${encoding.ext}`);
    const job = {
      input: recording.path,
      inputFps: recording.fps,
      width: options.width,
      height: options.height,
      ...attempt,
      output,
      scratch: join(dir, `palette-${index}.png`),
    };
    for (const args of encoding.passes(job)) await runFfmpeg(options.ffmpegPath, args, options.passTimeoutMs);
    const { size } = await stat(output);
    if (options.format !== 'gif' || size <= options.gifMaxBytes) return { path: output, size, ...attempt };
  }
  throw new AnimationTooLargeError(options.gifMaxBytes);
}
