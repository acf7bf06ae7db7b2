import { setTimeout as sleep } from 'node:timers/promises';
import type { Page } from 'playwright';
import { FRAME_QUALITY, FrameOutput, RecorderOutput, Recording } from './frame-output';

/** Frames per second when none is given: a run's video (CONTRACT.md, "Browser session runs"). */
export const DEFAULT_FPS = 10;

/**
 * How far behind the wall clock frames are written, ms: a frame reaches this process some time after
 * Chromium painted it (more on a busy machine), and waiting this long lets it take its own slots instead
 * of the frame before it being repeated there. {@link ScreencastRecorder.stop} waits as long for the last ones.
 */
const LATE_FRAME_MS = 400;

/** Options of {@link ScreencastRecorder.start}. Sizes in CSS px. */
export interface RecorderOptions {
  /** The page's viewport: the frames' size. */
  width: number;
  height: number;
  /** Frames per second (default {@link DEFAULT_FPS}). */
  fps?: number;
  output: RecorderOutput;
}

/**
 * The recorder of pages in real time (docs/animated-captures.md, "One recorder"): a browser session
 * run's video. It takes the browser's screencast (`page.screencast.start({ onFrame })`, JPEG frames;
 * Playwright's `recordVideo` needs its own ffmpeg build) and writes it at a steady frame rate to a
 * {@link FrameOutput} (a run's WebM is encoded live). Animated captures are stepped instead
 * (`recordSteps`, stepped-recorder.ts), so that no position of their scroll is missed.
 *
 * The browser sends a frame only when the page repaints, so frames are written on a clock: every 1/fps s
 * the latest frame is written again, as many times as the wall clock requires; a frame that arrives takes
 * the slots from the time Chromium painted it (its `timestamp`), so frames that arrive together after a
 * busy moment of this process each keep their place instead of the last one replacing them (frames are
 * written {@link LATE_FRAME_MS} behind the clock, so a late frame still finds its slots). The recording's duration
 * is therefore the time between {@link start} and {@link stop}, however still the page was. Until the
 * first frame arrives nothing is written; the first frame then covers the time since start. Memory holds
 * the latest frame and what the output has not taken yet, never the recording.
 */
export class ScreencastRecorder {
  private latest: Buffer | null = null;
  private startedAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  private constructor(
    private readonly page: Page,
    private readonly output: FrameOutput,
    private readonly fps: number,
  ) {}

  /**
   * Starts the output (ffmpeg, or the frames file) and the page's screencast; the recording's clock
   * starts at the call. Throws `VideoEncodingError` when ffmpeg cannot be started; the
   * screencast's own errors (a closed page) propagate.
   */
  static async start(page: Page, options: RecorderOptions): Promise<ScreencastRecorder> {
    const startedAt = Date.now();
    const fps = options.fps ?? DEFAULT_FPS;
    const output = await FrameOutput.open(options.output, { width: options.width, height: options.height, fps });
    const recorder = new ScreencastRecorder(page, output, fps);
    try {
      await page.screencast.start({
        size: { width: options.width, height: options.height },
        quality: FRAME_QUALITY,
        onFrame: ({ data, timestamp }) => recorder.onFrame(data, timestamp),
      });
    } catch (err) {
      await recorder.abort();
      throw err;
    }
    recorder.startedAt = startedAt;
    recorder.timer = setInterval(() => recorder.pump(Date.now() - LATE_FRAME_MS), Math.round(1000 / fps));
    return recorder;
  }

  /**
   * Ends the recording at `endAt` (epoch ms, default now; the recording then lasts from the call to
   * {@link start} to `endAt`): stops the screencast, writes the frames the clock still owes, and waits
   * for the output to be complete. Throws `VideoEncodingError` when ffmpeg or the file fails or no
   * frame ever arrived (the temporary files are removed then).
   */
  async stop(endAt = Date.now()): Promise<Recording> {
    const lastFrames = endAt + LATE_FRAME_MS - Date.now();
    if (lastFrames > 0) await sleep(lastFrames);
    this.stopped = true;
    clearInterval(this.timer);
    await this.page.screencast.stop().catch(() => undefined);
    if (!this.latest) this.latest = await this.page.screenshot({ type: 'jpeg', quality: FRAME_QUALITY, timeout: 2000 }).catch(() => null);
    this.pump(endAt);
    return this.output.finish();
  }

  /** Stops without a result: kills ffmpeg and removes the files. Never throws. */
  async abort(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.page.screencast.stop().catch(() => undefined);
    await this.output.abort();
  }

  /** A frame Chromium painted at `paintedAt` (epoch ms): the frame before it fills the slots up to then. */
  private onFrame(data: Buffer, paintedAt: number): void {
    if (this.stopped) return;
    this.pump(Math.min(paintedAt, Date.now()));
    this.latest = data;
  }

  /** Writes the latest frame as many times as the clock requires up to `now` (epoch ms). */
  private pump(now = Date.now()): void {
    if (!this.latest || !this.startedAt) return;
    const due = Math.max(1, Math.round(((now - this.startedAt) * this.fps) / 1000));
    while (this.output.written < due) this.output.write(this.latest);
  }
}
