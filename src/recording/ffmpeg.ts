import { ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import type { Writable } from 'node:stream';

/** Longest ffmpeg may take to finish a file once its input ended, ms; then it is killed. */
export const FINISH_TIMEOUT_MS = 30_000;

/** Bytes of ffmpeg's standard error kept for the message of a failure (its last line is quoted). */
const STDERR_KEPT = 8192;

/** Bytes of ffmpeg's standard output kept for {@link Ffmpeg.finish} (a pass writing a short report there, e.g. `framecrc`). */
const STDOUT_KEPT = 65536;

/** A recording or an encoding could not be produced (ffmpeg missing, failed or too slow, or no frame ever arrived). */
export class VideoEncodingError extends Error {}

/** How an ffmpeg process ended. */
interface FfmpegExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * One process of Debian's `ffmpeg` (config `FFMPEG_PATH`), fed on its standard input or reading files:
 * the encoder of run videos and animated captures (docs/animated-captures.md, "One recorder"). Its
 * standard error is kept (the last 8 KiB) to word a failure; a dead process makes writes to
 * {@link stdin} fail silently (EPIPE), and {@link finish} reports it.
 */
export class Ffmpeg {
  private stderr = '';
  private stdout = '';
  private readonly exited: Promise<FfmpegExit>;

  private constructor(private readonly child: ChildProcessWithoutNullStreams) {
    this.exited = new Promise((resolve) => {
      child.once('close', (code, signal) => resolve({ code, signal }));
      child.once('error', (err) => {
        this.stderr += `\n${err.message}`;
        resolve({ code: null, signal: null });
      });
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (this.stderr.length < STDERR_KEPT) this.stderr += chunk.toString('utf8');
    });
    child.stdout.on('data', (chunk: Buffer) => {
      if (this.stdout.length < STDOUT_KEPT) this.stdout += chunk.toString('utf8');
    });
    child.stdin.on('error', () => undefined);
  }

  /** Starts `ffmpegPath` with `args` (quiet: errors only, no prompt). Throws {@link VideoEncodingError} when it cannot be started. */
  static async spawn(ffmpegPath: string, args: readonly string[]): Promise<Ffmpeg> {
    const child = spawn(ffmpegPath, ['-hide_banner', '-loglevel', 'error', '-nostdin', ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    const ffmpeg = new Ffmpeg(child);
    const spawned = await new Promise<boolean>((resolve) => {
      child.once('spawn', () => resolve(true));
      child.once('error', () => resolve(false));
    });
    if (!spawned) throw new VideoEncodingError(`ffmpeg could not be started (${ffmpegPath})`);
    return ffmpeg;
  }

  /** The process's standard input (frames of a live encoding). */
  get stdin(): Writable {
    return this.child.stdin;
  }

  /**
   * Ends the input and waits up to `timeoutMs` for the process to exit (then kills it); returns what it
   * wrote on its standard output (the first 64 KiB). Throws {@link VideoEncodingError} naming the exit
   * code or signal and ffmpeg's last error line unless it exited 0.
   */
  async finish(timeoutMs = FINISH_TIMEOUT_MS): Promise<string> {
    this.child.stdin.end();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
    const result = await Promise.race([this.exited, timedOut]);
    clearTimeout(timer);
    if (result === 'timeout') {
      await this.kill();
      throw new VideoEncodingError(`ffmpeg did not finish within ${timeoutMs} ms`);
    }
    if (result.code !== 0) {
      const last = this.stderr.trim().split('\n').pop() ?? '';
      throw new VideoEncodingError(`ffmpeg exited with ${result.signal ?? result.code}: ${last}`);
    }
    return this.stdout;
  }

  /** Kills the process and waits for it to be gone. Never throws. */
  async kill(): Promise<void> {
    this.child.kill('SIGKILL');
    await this.exited;
  }
}

/** Runs ffmpeg with `args` to the end (no input on stdin) and returns its standard output, as {@link Ffmpeg.finish} does. */
export async function runFfmpeg(ffmpegPath: string, args: readonly string[], timeoutMs = FINISH_TIMEOUT_MS): Promise<string> {
  const ffmpeg = await Ffmpeg.spawn(ffmpegPath, args);
  return ffmpeg.finish(timeoutMs);
}
