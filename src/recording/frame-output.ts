import { Logger } from '@nestjs/common';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import type { Writable } from 'node:stream';
import { VIDEO_ENCODINGS, VideoEncodingName } from './encodings';
import { Ffmpeg, VideoEncodingError } from './ffmpeg';

/** JPEG quality of the screencast's frames (Chromium's `Page.startScreencast`), 0–100. */
export const FRAME_QUALITY = 80;

/** Bytes of frames waiting to be written above which new frames are dropped (the encoder is behind). */
const MAX_PENDING_BYTES = 32 * 1024 * 1024;

/** Where a recording's frames go: encoded live by ffmpeg (`encoding`, e.g. a run's WebM), or kept as a file of JPEG frames to encode later. */
export type RecorderOutput = { encoding: VideoEncodingName; ffmpegPath: string } | { frames: true };

/** A finished recording, in a temporary directory the caller removes with {@link Recording.dispose}. */
export interface Recording {
  /** The encoded video (`encoding` output) or the file of concatenated JPEG frames (`frames` output). */
  path: string;
  /** Frames written (repeats included). */
  frames: number;
  /** Frames per second. */
  fps: number;
  /** Length of the recording, ms (`frames / fps`). */
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

/** Size (CSS px: the page's viewport) and rate (frames per second) of the frames a {@link FrameOutput} takes. */
export interface FrameOutputOptions {
  width: number;
  height: number;
  fps: number;
}

/**
 * Where the recorders of src/recording/ write their frames, one JPEG per frame time (docs/animated-captures.md,
 * "One recorder"): an ffmpeg encoding fed live (an entry of {@link VIDEO_ENCODINGS}) or a file of
 * concatenated JPEGs with the byte offset of each, in a temporary directory of its own. Memory holds
 * what the output has not taken yet, at most {@link MAX_PENDING_BYTES}: beyond, frames are counted as
 * dropped instead of written.
 */
export class FrameOutput {
  private readonly logger = new Logger(FrameOutput.name);
  private first: Buffer | null = null;
  private slots = 0;
  private dropped = 0;
  private readonly offsets: number[] = [];
  private bytes = 0;

  private constructor(
    private readonly sink: Writable,
    private readonly encoder: Ffmpeg | null,
    private readonly dir: string,
    private readonly path: string,
    private readonly fps: number,
  ) {}

  /** Starts the output (ffmpeg, or the frames file). Throws {@link VideoEncodingError} when ffmpeg cannot be started. */
  static async open(output: RecorderOutput, options: FrameOutputOptions): Promise<FrameOutput> {
    const dir = await mkdtemp(join(tmpdir(), 'glimpse-recording-'));
    try {
      if ('encoding' in output) {
        const encoding = VIDEO_ENCODINGS[output.encoding];
        const path = join(dir, `video.${encoding.ext}`);
        const [args] = encoding.passes({
          input: 'pipe:0',
          fps: options.fps,
          width: options.width,
          height: options.height,
          scale: 1,
          output: path,
          scratch: join(dir, 'scratch'),
        });
        const ffmpeg = await Ffmpeg.spawn(output.ffmpegPath, args);
        return new FrameOutput(ffmpeg.stdin, ffmpeg, dir, path, options.fps);
      }
      const path = join(dir, 'frames.mjpeg');
      const file = createWriteStream(path);
      file.on('error', () => undefined);
      return new FrameOutput(file, null, dir, path, options.fps);
    } catch (err) {
      await rm(dir, { recursive: true, force: true });
      throw err;
    }
  }

  /** Frame times filled so far (frames written and dropped). */
  get written(): number {
    return this.slots;
  }

  /** Fills the next frame time with `frame` (a JPEG), or counts it as dropped when the output is behind. */
  write(frame: Buffer): void {
    this.slots++;
    if (this.sink.writableLength > MAX_PENDING_BYTES) {
      this.dropped++;
      return;
    }
    this.first ??= frame;
    this.sink.write(frame);
    this.offsets.push(this.bytes);
    this.bytes += frame.length;
  }

  /**
   * Ends the output and waits for it to be complete (ffmpeg's file written, or the frames file flushed).
   * Throws {@link VideoEncodingError} when ffmpeg or the file fails or no frame was written (the
   * temporary files are removed then).
   */
  async finish(): Promise<Recording> {
    try {
      if (!this.first) throw new VideoEncodingError('no frame was recorded');
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
      frames: this.slots,
      fps: this.fps,
      durationMs: Math.round((this.slots * 1000) / this.fps),
      firstFrame: this.first,
      frameOffsets: this.offsets,
      dropped: this.dropped,
      dispose: () => this.dispose(),
    };
  }

  /** Stops without a result: kills ffmpeg and removes the files. Never throws. */
  async abort(): Promise<void> {
    if (this.encoder) await this.encoder.kill();
    else this.sink.destroy();
    await this.dispose();
  }

  private async dispose(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true }).catch(() => undefined);
  }
}
