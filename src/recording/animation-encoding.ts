import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { finished } from 'node:stream/promises';
import { dirname, join } from 'node:path';
import type { AnimationFormat } from '../results/result-formats';
import { EncodeJob, VIDEO_ENCODINGS, VideoEncoding } from './encodings';
import { runFfmpeg, VideoEncodingError } from './ffmpeg';
import type { Recording } from './frame-output';

/** Lowest frame rate the GIF size cap's first fallback goes down to, frames per second. */
const GIF_MIN_FPS = 5;

/** Scale of the GIF size cap's last fallback (half the width and height: a quarter of the pixels). */
const GIF_FALLBACK_SCALE = 0.5;

/** Runs of consecutive frames in a GIF's size sample, spread evenly over the animation. */
const SAMPLE_RUNS = 6;

/**
 * Frames in each run of the size sample: the first is encoded against the previous run's last frame and
 * not counted; the others are encoded against their predecessor, as in the whole GIF.
 */
const SAMPLE_RUN_FRAMES = 3;

/** Factor over the cap above which a GIF's predicted size skips the attempt (samples land within a few per cent of the whole). */
const SKIP_OVER_FACTOR = 1.15;

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
 * still over: {@link AnimationTooLargeError}. An attempt that a sample of its frames predicts more than
 * 15% over the cap is skipped ({@link sampleFrameBytes}), and an encoding stops as soon as its file
 * passes the cap (docs/animated-captures.md, "GIF size cap"). Throws `VideoEncodingError` when ffmpeg
 * fails. ffmpeg reads the frames from the file, so memory stays bounded whatever the animation's length.
 */
export async function encodeAnimation(recording: Recording, options: AnimationEncodeOptions): Promise<EncodedAnimation> {
  const encoding: VideoEncoding = VIDEO_ENCODINGS[options.format];
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
  /** The file of frames at each rate: below the recording's, the frames of that rate copied once ({@link copyFrames}), so ffmpeg decodes only the frames it encodes. */
  const inputs = new Map<number, string>([[recording.fps, recording.path]]);
  /** Mean bytes of a GIF frame in the last size sample (the last attempt, the only one at a smaller scale, is never sampled). */
  let frameBytes: number | null = null;
  for (const [index, attempt] of attempts.entries()) {
    const output = join(dir, `animation-${index}.${encoding.ext}`);
    let input = inputs.get(attempt.fps);
    if (input === undefined) {
      input = join(dir, `frames-${attempt.fps}fps.mjpeg`);
      const frames = Array.from({ length: outputFrames(recording, attempt.fps) }, (_, k) => sourceFrame(recording, attempt.fps, k));
      await copyFrames(recording, frames, input);
      inputs.set(attempt.fps, input);
    }
    const job: EncodeJob = {
      input,
      width: options.width,
      height: options.height,
      ...attempt,
      output,
      scratch: join(dir, `palette-${index}.png`),
    };
    if (options.format !== 'gif') {
      for (const args of encoding.passes(job)) await runFfmpeg(options.ffmpegPath, args, options.passTimeoutMs);
      return { path: output, size: (await stat(output)).size, ...attempt };
    }
    if (index < attempts.length - 1) {
      const frames = outputFrames(recording, job.fps);
      // An earlier sample that already shows this attempt under the cap spares a new one: the encoding checks the cap anyway.
      if (frameBytes === null || frameBytes * frames > options.gifMaxBytes)
        frameBytes = await sampleFrameBytes(recording, encoding, job, join(dir, `sample-${index}.mjpeg`), options);
      if (frameBytes !== null && frameBytes * frames > options.gifMaxBytes * SKIP_OVER_FACTOR) continue;
    }
    for (const args of encoding.passes({ ...job, maxBytes: options.gifMaxBytes }))
      await runFfmpeg(options.ffmpegPath, args, options.passTimeoutMs);
    const { size } = await stat(output);
    if (size <= options.gifMaxBytes) return { path: output, size, ...attempt };
  }
  throw new AnimationTooLargeError(options.gifMaxBytes);
}

/** Frames of `recording` encoded at `fps` (the frames file's, dropped evenly). */
const outputFrames = (recording: Recording, fps: number): number => Math.round((recording.frameOffsets.length * fps) / recording.fps);

/** Index in `recording` of frame `k` of its encoding at `fps`: the frame of the recording at that frame's time. */
const sourceFrame = (recording: Recording, fps: number, k: number): number =>
  Math.min(recording.frameOffsets.length - 1, Math.round((k * recording.fps) / fps));

/**
 * Copies frames `indices` of `recording`'s file of frames, in that order, into a new file of frames at
 * `path`, one frame in memory at a time. Throws `VideoEncodingError` when a file cannot be read or written.
 */
async function copyFrames(recording: Recording, indices: number[], path: string): Promise<void> {
  const offsets = recording.frameOffsets;
  const { size: fileSize } = await stat(recording.path);
  const file = await open(recording.path, 'r');
  const copy = createWriteStream(path);
  try {
    for (const frame of indices) {
      const start = offsets[frame];
      const data = Buffer.alloc((offsets[frame + 1] ?? fileSize) - start);
      await file.read(data, 0, data.length, start);
      if (!copy.write(data)) await once(copy, 'drain');
    }
    copy.end();
    await finished(copy);
  } catch (err) {
    copy.destroy();
    throw new VideoEncodingError(`the frames could not be copied: ${(err as Error).message}`);
  } finally {
    await file.close();
  }
}

/**
 * Mean bytes of a frame of `job`'s output, from a sample of its frames (`encoding.sizeSample`): runs
 * of consecutive output frames spread evenly over the recording are copied from the frames file into
 * `samplePath` and encoded; the mean is over the frames encoded against their predecessor (times the
 * output's frames: its predicted size). Null when the output has too few frames for a sample to be
 * cheaper than the encoding itself. Throws `VideoEncodingError` when ffmpeg fails.
 */
async function sampleFrameBytes(
  recording: Recording,
  encoding: VideoEncoding,
  job: EncodeJob,
  samplePath: string,
  options: AnimationEncodeOptions,
): Promise<number | null> {
  const frameCount = outputFrames(recording, job.fps);
  if (!encoding.sizeSample || frameCount <= 2 * SAMPLE_RUNS * SAMPLE_RUN_FRAMES) return null;
  const indices = Array.from({ length: SAMPLE_RUNS }, (_, run) => {
    const first = Math.floor(((run + 0.5) * frameCount) / SAMPLE_RUNS) - 1;
    return Array.from({ length: SAMPLE_RUN_FRAMES }, (_, k) => sourceFrame(recording, job.fps, first + k));
  }).flat();
  await copyFrames(recording, indices, samplePath);
  const report = await runFfmpeg(options.ffmpegPath, encoding.sizeSample({ ...job, input: samplePath }), options.passTimeoutMs);
  const sizes = report
    .split('\n')
    .filter((line) => line.trim() && !line.startsWith('#'))
    .map((line) => Number(line.split(',')[4]))
    .filter((size, i) => i % SAMPLE_RUN_FRAMES !== 0 && Number.isFinite(size));
  if (!sizes.length) return null;
  return sizes.reduce((sum, size) => sum + size, 0) / sizes.length;
}
