import { Logger } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CDPSession, Page } from 'playwright';
import { FRAME_QUALITY, FrameOutput, Recording } from './frame-output';

/**
 * Longest the recorder waits for the screencast frame showing a position, ms, before it takes the
 * latest frame instead: the compositor of a page that does not draw the position it was scrolled to
 * (never seen on a healthy page; a frame takes 20–150 ms, the most on a busy machine).
 */
const FRAME_WAIT_MS = 2_000;

/** Options of {@link recordSteps}. Sizes in CSS px (the page's viewport: the frames' size), times in ms. */
export interface SteppedRecordingOptions {
  width: number;
  height: number;
  /** Frames per second. */
  fps: number;
  /** Frames to take, frame `i` at `i / fps` s: the recording lasts `frames / fps` s. */
  frames: number;
  /** Puts the page where it is `timeMs` after the recording's start and resolves to its vertical scroll offset then, CSS px. */
  moveTo: (timeMs: number) => Promise<number>;
  /** Epoch ms by which the last frame must be taken. */
  deadline: number;
}

/** A stepped recording whose frames were not all taken by its deadline ({@link recordSteps}); `message` says when. */
export class RecordingLateError extends Error {}

/** A screencast frame: the JPEG and the vertical scroll offset of the page it shows, CSS px. */
interface ScreencastFrame {
  data: Buffer;
  y: number;
}

/**
 * Records a page moved to each frame's time in turn (docs/animated-captures.md, "How it is recorded"):
 * an animated capture, whose every frame shows its own scroll position whatever the machine's load.
 * For frame `i`, it waits until `i / fps` s after its start when it is ahead of that time (not when
 * behind), calls `moveTo(i / fps s)`, and writes the first screencast frame (Chromium's
 * `Page.startScreencast`, JPEG) whose scroll offset (`metadata.scrollOffsetY`) is the one `moveTo`
 * returned: the latest frame when it already shows it (the page did not move), else the next one the
 * compositor draws, waiting up to {@link FRAME_WAIT_MS} (then the latest). The file of frames
 * ({@link FrameOutput}, `frames` output) thus lasts exactly `frames / fps` s, however long taking them
 * took; the page's own animations run on the wall clock meanwhile.
 *
 * Throws {@link RecordingLateError} when `deadline` passes before the last frame, a `VideoEncodingError`
 * when the frames cannot be written, and what `moveTo` or the DevTools protocol throw (a closed page);
 * the files are removed then.
 */
export async function recordSteps(page: Page, options: SteppedRecordingOptions): Promise<Recording> {
  const logger = new Logger('SteppedRecorder');
  const output = await FrameOutput.open({ frames: true }, options);
  let cdp: CDPSession | null = null;
  let deadlineTimer: NodeJS.Timeout | undefined;
  try {
    cdp = await page.context().newCDPSession(page);
    const session = cdp;
    let latest: ScreencastFrame | null = null;
    let wanted: { y: number; resolve: (frame: Buffer) => void } | null = null;
    session.on('Page.screencastFrame', (event) => {
      void session.send('Page.screencastFrameAck', { sessionId: event.sessionId }).catch(() => undefined);
      const frame = { data: Buffer.from(event.data, 'base64'), y: event.metadata.scrollOffsetY };
      latest = frame;
      if (wanted && shows(frame, wanted.y)) {
        wanted.resolve(frame.data);
        wanted = null;
      }
    });
    const late = new Promise<never>((_, reject) => {
      deadlineTimer = setTimeout(
        () =>
          reject(new RecordingLateError(`the page did not paint the animation's frames by ${new Date(options.deadline).toISOString()}`)),
        Math.max(0, options.deadline - Date.now()),
      );
    });
    late.catch(() => undefined);
    const beforeDeadline = <T>(work: Promise<T>): Promise<T> => {
      work.catch(() => undefined);
      return Promise.race([work, late]);
    };
    /** The frame showing scroll offset `y`: the latest when it does, else the next that does; after {@link FRAME_WAIT_MS}, null. */
    const frameShowing = (y: number): Promise<Buffer | null> => {
      const current: ScreencastFrame | null = latest;
      if (current && shows(current, y)) return Promise.resolve(current.data);
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          wanted = null;
          resolve(null);
        }, FRAME_WAIT_MS);
        wanted = {
          y,
          resolve: (frame) => {
            clearTimeout(timer);
            resolve(frame);
          },
        };
      });
    };
    /** A frame now, whatever it shows: the latest, or a screenshot when the screencast sent none yet. */
    const anyFrame = async (): Promise<Buffer> =>
      (latest as ScreencastFrame | null)?.data ??
      Buffer.from((await session.send('Page.captureScreenshot', { format: 'jpeg', quality: FRAME_QUALITY })).data, 'base64');

    await session.send('Page.startScreencast', {
      format: 'jpeg',
      quality: FRAME_QUALITY,
      maxWidth: options.width,
      maxHeight: options.height,
    });
    const startedAt = Date.now();
    let unmatched = 0;
    for (let i = 0; i < options.frames; i++) {
      const timeMs = (i * 1000) / options.fps;
      const ahead = startedAt + timeMs - Date.now();
      if (ahead > 0) await sleep(ahead);
      const y = await beforeDeadline(options.moveTo(timeMs));
      let frame = await beforeDeadline(frameShowing(y));
      if (!frame) {
        unmatched++;
        frame = await beforeDeadline(anyFrame());
      }
      output.write(frame);
    }
    if (unmatched) logger.warn(`${unmatched} of ${options.frames} animation frames taken before the page painted their scroll position`);
  } catch (err) {
    await output.abort();
    throw err;
  } finally {
    clearTimeout(deadlineTimer);
    await cdp?.send('Page.stopScreencast').catch(() => undefined);
    // Not awaited: the detach of a page whose main thread hangs never answers (the context's close ends the session anyway).
    void cdp?.detach().catch(() => undefined);
  }
  return output.finish();
}

/** Whether `frame` shows the page at scroll offset `y` (CSS px; the positions asked are whole CSS px, so half of one tells them apart). */
const shows = (frame: ScreencastFrame | null, y: number): boolean => frame !== null && Math.abs(frame.y - y) < 0.5;
