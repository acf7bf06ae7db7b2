import { Logger } from '@nestjs/common';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import type { Writable } from 'node:stream';
import type { Page } from 'playwright';
import { VIDEO_ENCODINGS, VideoEncodingName } from './encodings';
import { Ffmpeg, VideoEncodingError } from './ffmpeg';
import { setTimeout as sleep } from 'node:timers/promises';

/** Frames per second when none is given: a run's video (CONTRACT.md, "Browser session runs"). */
export const DEFAULT_FPS = 10;

/** JPEG quality of the screencast's frames (Chromium's `Page.startScreencast`), 0–100. */
const FRAME_QUALITY = 80;

/**
 * How far behind the wall clock frames are written, ms: a frame reaches this process some time after
 * Chromium painted it (more on a busy machine), and waiting this long lets it take its own slots instead
 * of the frame before it being repeated there. {@link ScreencastRecorder.stop} waits as long for the last ones.
 */
const LATE_FRAME_MS = 400;

/** Bytes of frames waiting to be written above which new frames are dropped (the encoder is behind). */
const MAX_PENDING_BYTES = 32 * 1024 * 1024;

/** Where the paced frames go: encoded live by ffmpeg (`encoding`, e.g. a run's WebM), or kept as a file of JPEG frames to encode later. */
export type RecorderOutput = { encoding: VideoEncodingName; ffmpegPath: string } | { frames: true };

/** Options of {@link ScreencastRecorder.start}. Sizes in CSS px. */
export interface RecorderOptions {
  /** The page's viewport: the frames' size. */
  width: number;
  height: number;
  /** Frames per second (default {@link DEFAULT_FPS}). */
  fps?: number;
  /** Planned length, ms: no frame is written for a time beyond it, however late {@link ScreencastRecorder.stop} is called. */
  lengthMs?: number;
  output: RecorderOutput;
}

/** A finished recording, in a temporary directory the caller removes with {@link Recording.dispose}. */
export interface Recording {
  /** The encoded video (`encoding` output) or the file of concatenated JPEG frames (`frames` output). */
  path: string;
  /** Frames written (repeats included). */
  frames: number;
  /** Frames per second. */
  fps: number;
  /** Length of the recording, ms (`frames / fps`): the wall-clock time between start and stop. */
  durationMs: number;
  /** The first frame written (JPEG): an animation's poster. */
  firstFrame: Buffer;
  /**
   * Byte offset of each frame in the file of frames (`frames` output), in order; each frame ends where
   * the next starts, the last at the end of the file. Fewer than `frames` when frames were dropped.
   */
  frameOffsets: number[];
  /** Frames the output could not take in time (the encoder was behind); 0 in a healthy recording. */
  dropped: number;
  /** Removes the file and its directory. */
  dispose(): Promise<void>;
}

/**
 * The one recorder of pages (docs/animated-captures.md, "One recorder"): a browser session run's video
 * and an animated capture's frames. It takes the browser's screencast (`page.screencast.start({ onFrame })`,
 * JPEG frames; Playwright's `recordVideo` needs its own ffmpeg build) and writes it at a steady frame
 * rate to an ffmpeg encoding live (an entry of {@link VIDEO_ENCODINGS}) or to a file of frames.
 *
 * The browser sends a frame only when the page repaints, so frames are written on a clock: every 1/fps s
 * the latest frame is written again, as many times as the wall clock requires; a frame that arrives takes
 * the slots from the time Chromium painted it (its `timestamp`), so frames that arrive together after a
 * busy moment of this process each keep their place instead of the last one replacing them (frames are
 * written {@link LATE_FRAME_MS} behind the clock, so a late frame still finds its slots). The recording's duration
 * is therefore the time between {@link start} and {@link stop}, however still the page was (CONTRACT.md,
 * "Animated captures": frames repeated while the page does not repaint). Until the first frame arrives
 * nothing is written; the first frame then covers the time since start. Memory holds the latest frame
 * and what the output has not taken yet (at most {@link MAX_PENDING_BYTES}), never the recording.
 */
export class ScreencastRecorder {
  private readonly logger = new Logger(ScreencastRecorder.name);
  private latest: Buffer | null = null;
  private first: Buffer | null = null;
  private written = 0;
  private dropped = 0;
  private readonly offsets: number[] = [];
  private bytes = 0;
  private startedAt = 0;
  /** Epoch ms beyond which no frame is written (start + `lengthMs`). */
  private endsAt = Number.POSITIVE_INFINITY;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  private constructor(
    private readonly page: Page,
    private readonly sink: Writable,
    private readonly encoder: Ffmpeg | null,
    private readonly dir: string,
    readonly path: string,
    private readonly fps: number,
  ) {}

  /**
   * Starts the output (ffmpeg, or the frames file) and the page's screencast; the recording's clock
   * starts at the call. Throws {@link VideoEncodingError} when ffmpeg cannot be started; the
   * screencast's own errors (a closed page) propagate.
   */
  static async start(page: Page, options: RecorderOptions): Promise<ScreencastRecorder> {
    const startedAt = Date.now();
    const fps = options.fps ?? DEFAULT_FPS;
    const dir = await mkdtemp(join(tmpdir(), 'glimpse-recording-'));
    let recorder: ScreencastRecorder;
    try {
      if ('encoding' in options.output) {
        const encoding = VIDEO_ENCODINGS[options.output.encoding];
        const path = join(dir, `video.${encoding.ext}`);
        const [args] = encoding.passes({
          input: 'pipe:0',
          inputFps: fps,
          fps,
          width: options.width,
          height: options.height,
          scale: 1,
          output: path,
          scratch: join(dir, 'scratch'),
        });
        const ffmpeg = await Ffmpeg.spawn(options.output.ffmpegPath, args);
        recorder = new ScreencastRecorder(page, ffmpeg.stdin, ffmpeg, dir, path, fps);
      } else {
        const path = join(dir, 'frames.mjpeg');
        const file = createWriteStream(path);
        file.on('error', () => undefined);
        recorder = new ScreencastRecorder(page, file, null, dir, path, fps);
      }
    } catch (err) {
      await rm(dir, { recursive: true, force: true });
      throw err;
    }
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
    if (options.lengthMs !== undefined) recorder.endsAt = startedAt + options.lengthMs;
    recorder.timer = setInterval(() => recorder.pump(Date.now() - LATE_FRAME_MS), Math.round(1000 / fps));
    return recorder;
  }

  /** Epoch ms at which the recording's clock started (its first frame's time). */
  get startTime(): number {
    return this.startedAt;
  }

  /**
   * Ends the recording at `endAt` (epoch ms, default now; the recording then lasts from the call to
   * {@link start} to `endAt`): stops the screencast, writes the frames the clock still owes, and waits
   * for the output to be complete. Throws {@link VideoEncodingError} when ffmpeg or the file fails or no
   * frame ever arrived (the temporary files are removed then).
   */
  async stop(endAt = Date.now()): Promise<Recording> {
    const lastFrames = Math.min(endAt, this.endsAt) + LATE_FRAME_MS - Date.now();
    if (lastFrames > 0) await sleep(lastFrames);
    this.stopped = true;
    clearInterval(this.timer);
    await this.page.screencast.stop().catch(() => undefined);
    if (!this.latest) this.latest = await this.page.screenshot({ type: 'jpeg', quality: FRAME_QUALITY, timeout: 2000 }).catch(() => null);
    this.pump(endAt);
    try {
      if (this.written === 0 || !this.first) throw new VideoEncodingError('no frame was recorded');
      if (this.encoder) await this.encoder.finish();
      else {
        this.sink.end();
        await finished(this.sink).catch((err: Error) => {
          throw new VideoEncodingError(`the frames could not be written: ${err.message}`);
        });
      }
    } catch (err) {
      await this.encoder?.kill();
      await this.dispose();
      throw err;
    }
    if (this.dropped) this.logger.warn(`${this.dropped} video frames dropped: the encoder fell behind`);
    return {
      path: this.path,
      frames: this.written,
      fps: this.fps,
      durationMs: Math.round((this.written * 1000) / this.fps),
      firstFrame: this.first,
      frameOffsets: this.offsets,
      dropped: this.dropped,
      dispose: () => this.dispose(),
    };
  }

  /** Stops without a result: kills ffmpeg and removes the files. Never throws. */
  async abort(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.page.screencast.stop().catch(() => undefined);
    if (this.encoder) await this.encoder.kill();
    else this.sink.destroy();
    await this.dispose();
  }

  /** A frame Chromium painted at `paintedAt` (epoch ms): the frame before it fills the slots up to then. */
  private onFrame(data: Buffer, paintedAt: number): void {
    if (this.stopped) return;
    this.pump(Math.min(paintedAt, Date.now()));
    this.latest = data;
  }

  /** Writes the latest frame as many times as the clock requires up to `now` (epoch ms; at most the planned end). */
  private pump(now = Date.now()): void {
    if (!this.latest || !this.startedAt) return;
    const due = Math.max(1, Math.round(((Math.min(now, this.endsAt) - this.startedAt) * this.fps) / 1000));
    while (this.written < due) {
      if (this.sink.writableLength > MAX_PENDING_BYTES) {
        this.dropped += due - this.written;
        this.written = due;
        break;
      }
      this.first ??= this.latest;
      this.sink.write(this.latest);
      this.offsets.push(this.bytes);
      this.bytes += this.latest.length;
      this.written++;
    }
  }

  private async dispose(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true }).catch(() => undefined);
  }
}
