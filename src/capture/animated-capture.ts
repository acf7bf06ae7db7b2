import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright';
import sharp from 'sharp';
import { PageFailure, ScrollPlan, scrollPositionAt, scrollTarget, scrollToY } from '../browser/page-toolkit';
import { encodeAnimation } from '../recording/animation-encoding';
import type { Recording } from '../recording/frame-output';
import { recordSteps, RecordingLateError } from '../recording/stepped-recorder';
import type { AnimationFormat } from '../results/result-formats';
import { animationLengthMs, AnimationOptions } from './capture-options-schemas';

/** The recorder's settings of an animated capture (configuration: `FFMPEG_PATH`, `GIF_MAX_BYTES`, `CAPTURE_TIMEOUT_MS`). */
export interface AnimationEncoder {
  ffmpegPath: string;
  /** Bytes. */
  gifMaxBytes: number;
  /** Longest one ffmpeg pass may take, ms. */
  passTimeoutMs: number;
}

/** The viewport of the page recorded, CSS px, and the tallest page counted, image px (`fullPageMaxHeight`) at `scale`. */
export interface AnimationViewport {
  width: number;
  height: number;
  scale: number;
  fullPageMaxHeight: number;
}

/** An encoded animated capture. */
export interface AnimatedResult {
  /** The file's bytes (MP4, WebM or GIF). */
  video: Buffer;
  /** The first frame as PNG (the job's `thumbnailUrl` unless `thumbnail` asks for a smaller one). */
  poster: Buffer;
}

/**
 * Records the animated capture of a loaded page (CONTRACT.md, "Animated captures";
 * docs/animated-captures.md, "How it is recorded"): the page goes to its top, then each frame of
 * {@link animationLengthMs} at `animation.fps` is taken with the page scrolled where the scroll is at
 * that frame's time ({@link scrollPositionAt}: still for `startDelayMs`, to `scrollTo` over `durationMs`
 * with the easing, back with `scrollBack`), by {@link recordSteps}: paced on the wall clock, never
 * missing a position when the machine is slow, so the file lasts the animation's length (± one frame)
 * with every position in it. Returns the frames (encode them with {@link encodeAnimatedCapture},
 * outside the browser lease); throws what the page throws (the recording is removed then), a
 * {@link PageFailure} "the page did not paint the animation within … ms" when the frames are not all
 * taken `maxLateMs` after the animation's length (`CAPTURE_TIMEOUT_MS`: the screenshot's share of the
 * capture's budget, which an animation does not take), or a `VideoEncodingError`.
 */
export async function recordAnimation(
  page: Page,
  animation: AnimationOptions,
  viewport: AnimationViewport,
  maxLateMs: number,
): Promise<Recording> {
  const toY = await scrollTarget(page, animation.scrollTo, Math.floor(viewport.fullPageMaxHeight / viewport.scale));
  const plan: ScrollPlan = {
    toY,
    startDelayMs: animation.startDelayMs,
    durationMs: animation.durationMs,
    easing: animation.easing,
    scrollBack: animation.scrollBack,
  };
  const lengthMs = animationLengthMs(animation);
  const limitMs = lengthMs + maxLateMs;
  try {
    return await recordSteps(page, {
      width: viewport.width,
      height: viewport.height,
      fps: animation.fps,
      frames: Math.max(1, Math.round((lengthMs * animation.fps) / 1000)),
      moveTo: (timeMs) => scrollToY(page, scrollPositionAt(plan, timeMs)),
      deadline: Date.now() + limitMs,
    });
  } catch (err) {
    if (err instanceof RecordingLateError) throw new PageFailure(`the page did not paint the animation within ${limitMs} ms`);
    throw err;
  }
}

/**
 * Encodes a recording of {@link recordAnimation} as `format` ({@link encodeAnimation}: MP4 H.264,
 * WebM VP9, GIF with its size cap and fallbacks) and makes the poster (the first frame as PNG); the
 * recording is removed in all cases. Throws `AnimationTooLargeError` (a GIF over `gifMaxBytes`
 * after the fallbacks) or a `VideoEncodingError`.
 */
export async function encodeAnimatedCapture(
  recording: Recording,
  format: AnimationFormat,
  viewport: AnimationViewport,
  encoder: AnimationEncoder,
): Promise<AnimatedResult> {
  try {
    const encoded = await encodeAnimation(recording, {
      ffmpegPath: encoder.ffmpegPath,
      format,
      width: viewport.width,
      height: viewport.height,
      gifMaxBytes: encoder.gifMaxBytes,
      passTimeoutMs: encoder.passTimeoutMs,
    });
    const poster = await sharp(recording.firstFrame).resize(viewport.width, viewport.height, { fit: 'fill' }).png().toBuffer();
    return { video: await readFile(encoded.path), poster };
  } finally {
    await recording.dispose();
  }
}
