import { Logger } from '@nestjs/common';
import { ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright';

/** Frames per second of a run's video: steady, the last frame repeated while the page does not repaint. */
export const VIDEO_FPS = 10;

/** Bytes of frames waiting in ffmpeg's stdin above which new frames are dropped (the encoder is behind). */
const MAX_PENDING_BYTES = 32 * 1024 * 1024;

/** Longest ffmpeg may take to finish the file once the input ended, ms; then it is killed. */
const FINISH_TIMEOUT_MS = 30_000;

/** Options of {@link VideoRecorder.start}. Sizes in CSS px. */
export interface VideoRecorderOptions {
  /** Path of Debian's `ffmpeg` (config `FFMPEG_PATH`). */
  ffmpegPath: string;
  /** The session's viewport: the video's frame size. */
  width: number;
  height: number;
  /** Frames per second (default {@link VIDEO_FPS}). */
  fps?: number;
}

/** A finished recording: a WebM (VP8) file in a temporary directory the caller removes with {@link VideoRecording.dispose}. */
export interface VideoRecording {
  path: string;
  /** Frames written to the encoder (repeats included). */
  frames: number;
  /** Length of the video, ms (`frames / fps`): the wall-clock time between start and stop. */
  durationMs: number;
  /** Removes the file and its directory. */
  dispose(): Promise<void>;
}

/** The recording could not be produced (ffmpeg missing, failed, or no frame ever arrived). */
export class VideoEncodingError extends Error {}

/**
 * Records a page as WebM (VP8) at the viewport's size, from the browser's screencast
 * (`page.screencast.start({ onFrame })`, JPEG frames) piped to Debian's `ffmpeg` (CONTRACT.md,
 * "Browser session runs"; Playwright's `recordVideo` needs its own ffmpeg build).
 *
 * The browser sends a frame only when the page repaints, so frames are written on a clock:
 * every 1/fps s the latest frame is written again, as many times as the wall clock requires.
 * The video's duration is therefore the time between {@link start} and {@link stop}, however
 * still the page was. Until the first frame arrives nothing is written; the first frame then
 * covers the time since start.
 */
export class VideoRecorder {
  private readonly logger = new Logger(VideoRecorder.name);
  private latest: Buffer | null = null;
  private written = 0;
  private dropped = 0;
  private startedAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private stderr = '';
  private stopped = false;

  private constructor(
    private readonly page: Page,
    private readonly ffmpeg: ChildProcessWithoutNullStreams,
    private readonly dir: string,
    readonly path: string,
    private readonly fps: number,
  ) {
    this.exited = new Promise((resolve) => {
      ffmpeg.once('close', (code, signal) => resolve({ code, signal }));
      ffmpeg.once('error', (err) => {
        this.stderr += `\n${err.message}`;
        resolve({ code: null, signal: null });
      });
    });
    ffmpeg.stderr.on('data', (chunk: Buffer) => {
      if (this.stderr.length < 8192) this.stderr += chunk.toString('utf8');
    });
    // A dead encoder makes writes fail with EPIPE; the failure is reported by stop().
    ffmpeg.stdin.on('error', () => undefined);
  }

  /**
   * Spawns ffmpeg and starts the page's screencast. Throws {@link VideoEncodingError} when ffmpeg
   * cannot be started; the screencast's own errors (a closed page) propagate.
   */
  static async start(page: Page, options: VideoRecorderOptions): Promise<VideoRecorder> {
    const startedAt = Date.now();
    const fps = options.fps ?? VIDEO_FPS;
    const dir = await mkdtemp(join(tmpdir(), 'glimpse-run-video-'));
    const path = join(dir, 'video.webm');
    const ffmpeg = spawn(
      options.ffmpegPath,
      [
        '-hide_banner',
        '-loglevel',
        'error',
        '-nostdin',
        '-f',
        'image2pipe',
        '-c:v',
        'mjpeg',
        '-framerate',
        String(fps),
        '-i',
        'pipe:0',
        // Every frame scaled to the viewport (the screencast rounds odd sizes down), 4:2:0 for players.
        '-vf',
        `scale=${options.width}:${options.height}:flags=bilinear,format=yuv420p`,
        '-c:v',
        'libvpx',
        '-deadline',
        'realtime',
        '-cpu-used',
        '8',
        '-b:v',
        '1M',
        '-crf',
        '10',
        '-threads',
        '1',
        '-an',
        '-f',
        'webm',
        '-y',
        path,
      ],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    const recorder = new VideoRecorder(page, ffmpeg, dir, path, fps);
    const spawned = await new Promise<boolean>((resolve) => {
      ffmpeg.once('spawn', () => resolve(true));
      ffmpeg.once('error', () => resolve(false));
    });
    if (!spawned) {
      await rm(dir, { recursive: true, force: true });
      throw new VideoEncodingError(`ffmpeg could not be started (${options.ffmpegPath})`);
    }
    try {
      await page.screencast.start({
        size: { width: options.width, height: options.height },
        onFrame: ({ data }) => recorder.onFrame(data),
      });
    } catch (err) {
      await recorder.abort();
      throw err;
    }
    recorder.startedAt = startedAt;
    recorder.timer = setInterval(() => recorder.pump(), Math.round(1000 / fps));
    return recorder;
  }

  /**
   * Ends the recording at `endAt` (epoch ms, default now; the video then lasts from the call to
   * {@link start} to `endAt`): stops the screencast, writes the frames the clock still owes, and waits
   * for ffmpeg to finish the file. Throws {@link VideoEncodingError} when ffmpeg fails or no frame
   * ever arrived (the temporary file is removed then).
   */
  async stop(endAt = Date.now()): Promise<VideoRecording> {
    const stoppedAt = endAt;
    this.stopped = true;
    clearInterval(this.timer);
    await this.page.screencast.stop().catch(() => undefined);
    if (!this.latest) this.latest = await this.page.screenshot({ type: 'jpeg', quality: 80, timeout: 2000 }).catch(() => null);
    this.pump(stoppedAt);
    this.ffmpeg.stdin.end();
    const exit = await this.finish();
    if (this.written === 0 || exit.code !== 0) {
      await this.dispose();
      const why =
        this.written === 0
          ? 'no frame was recorded'
          : `ffmpeg exited with ${exit.signal ?? exit.code}: ${this.stderr.trim().split('\n').pop() ?? ''}`;
      throw new VideoEncodingError(why);
    }
    if (this.dropped) this.logger.warn(`${this.dropped} video frames dropped: the encoder fell behind`);
    return {
      path: this.path,
      frames: this.written,
      durationMs: Math.round((this.written * 1000) / this.fps),
      dispose: () => this.dispose(),
    };
  }

  /** Stops without a result: kills ffmpeg and removes the file. Never throws. */
  async abort(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.page.screencast.stop().catch(() => undefined);
    this.ffmpeg.kill('SIGKILL');
    await this.exited;
    await this.dispose();
  }

  private onFrame(data: Buffer): void {
    if (this.stopped) return;
    this.latest = data;
  }

  /** Writes the latest frame as many times as the clock requires up to `now`. */
  private pump(now = Date.now()): void {
    if (!this.latest || !this.startedAt) return;
    const due = Math.max(1, Math.round(((now - this.startedAt) * this.fps) / 1000));
    while (this.written < due) {
      if (this.ffmpeg.stdin.writableLength > MAX_PENDING_BYTES) {
        this.dropped += due - this.written;
        this.written = due;
        break;
      }
      this.ffmpeg.stdin.write(this.latest);
      this.written++;
    }
  }

  private async finish(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), FINISH_TIMEOUT_MS)));
    const result = await Promise.race([this.exited, timedOut]);
    clearTimeout(timer);
    if (result !== 'timeout') return result;
    this.ffmpeg.kill('SIGKILL');
    await this.exited;
    return { code: null, signal: 'SIGKILL' };
  }

  private async dispose(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true }).catch(() => undefined);
  }
}
