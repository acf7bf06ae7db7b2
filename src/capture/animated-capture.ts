import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright';
import sharp from 'sharp';
import { PageFailure, playScroll, scrollTarget, TimeLimitExceededError, withTimeLimit } from '../browser/page-toolkit';
import { encodeAnimation } from '../recording/animation-encoding';
import { Recording, ScreencastRecorder } from '../recording/screencast-recorder';
import type { AnimationFormat } from '../results/result-formats';
import { animationLengthMs, AnimationOptions } from './capture-options-schemas';
import { setTimeout as sleep } from 'node:timers/promises';

/** Longer than the animation the in-page scroll may take before the capture gives up on it, ms (a page that stopped painting). */
const SCROLL_GRACE_MS = 5_000;

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
 * docs/animated-captures.md): the page goes to its top, the {@link ScreencastRecorder} starts keeping
 * frames at `animation.fps`, the page plays the scroll on its own animation frames ({@link playScroll}:
 * still for `startDelayMs`, to `scrollTo` over `durationMs` with the easing, back with `scrollBack`), and
 * the recording stops exactly {@link animationLengthMs} after it started, so the file lasts that long
 * (± one frame). Returns the frames (encode them with {@link encodeAnimatedCapture}, outside the
 * browser lease); throws what the page throws (the recording is removed then), a {@link PageFailure}
 * "the page did not finish its scroll within … ms" when the page stops painting, or a `VideoEncodingError`.
 */
export async function recordAnimation(page: Page, animation: AnimationOptions, viewport: AnimationViewport): Promise<Recording> {
  const toY = await scrollTarget(page, animation.scrollTo, Math.floor(viewport.fullPageMaxHeight / viewport.scale));
  const lengthMs = animationLengthMs(animation);
  const recorder = await ScreencastRecorder.start(page, {
    width: viewport.width,
    height: viewport.height,
    fps: animation.fps,
    lengthMs,
    output: { frames: true },
  });
  const endAt = recorder.startTime + lengthMs;
  try {
    const scroll = playScroll(page, {
      toY,
      startInMs: animation.startDelayMs - (Date.now() - recorder.startTime),
      durationMs: animation.durationMs,
      easing: animation.easing,
      scrollBack: animation.scrollBack,
    });
    await withTimeLimit(scroll, lengthMs + SCROLL_GRACE_MS).catch((err: unknown) => {
      if (err instanceof TimeLimitExceededError)
        throw new PageFailure(`the page did not finish its scroll within ${lengthMs + SCROLL_GRACE_MS} ms`);
      throw err;
    });
    await sleep(Math.max(0, endAt - Date.now()));
  } catch (err) {
    await recorder.abort();
    throw err;
  }
  return recorder.stop(endAt);
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
