import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { loadConfig } from '../../src/config/app-config';
import { AnimationTooLargeError, encodeAnimation } from '../../src/recording/animation-encoding';
import type { Recording } from '../../src/recording/frame-output';
import { probeVideo } from '../support/video';

const run = promisify(execFile);

/** The recorder's frames file of `seconds` of 320 × 200 random noise at 12 fps (concatenated JPEGs), as a {@link Recording}. */
async function noiseRecording(ffmpegPath: string, dir: string, seconds: number): Promise<Recording> {
  const path = join(dir, 'frames.mjpeg');
  const frames = 12 * seconds;
  await run(ffmpegPath, [
    ...['-v', 'error', '-f', 'lavfi', '-i', 'nullsrc=s=320x200:r=12,geq=lum=random(1)*255:cb=random(2)*255:cr=random(3)*255'],
    ...['-frames:v', String(frames), '-c:v', 'mjpeg', '-q:v', '2', '-f', 'image2pipe', '-y', path],
  ]);
  // Each JPEG starts after the previous one's end-of-image marker (FF D9).
  const data = readFileSync(path);
  const frameOffsets = [0];
  for (
    let end = data.indexOf(Buffer.from([0xff, 0xd9]));
    end >= 0 && end + 2 < data.length;
    end = data.indexOf(Buffer.from([0xff, 0xd9]), end + 2)
  )
    frameOffsets.push(end + 2);
  expect(frameOffsets).toHaveLength(frames);
  const durationMs = seconds * 1000;
  return { path, frames, fps: 12, durationMs, firstFrame: Buffer.alloc(0), frameOffsets, dropped: 0, dispose: async () => undefined };
}

/**
 * The GIF size cap's fallbacks (CONTRACT.md, "Animated captures": over `GIF_MAX_BYTES`, a lower frame
 * rate, then a smaller scale, then `animation larger than … bytes`), each step reached on purpose: Debian's
 * ffmpeg encodes a second of 320 × 200 random noise at 12 fps (every frame different, about 1.9 bytes per
 * pixel in a GIF: ~1.4 MB whole, ~0.7 MB at 6 fps, ~0.18 MB at 6 fps and half the size), with caps between
 * those sizes.
 */
describe('encodeAnimation: the GIF size cap', () => {
  const config = loadConfig(process.env);
  let dir: string;
  let recording: Recording;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'glimpse-gif-cap-'));
    recording = await noiseRecording(config.ffmpegPath, dir, 1);
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const encode = (gifMaxBytes: number) =>
    encodeAnimation(recording, {
      ffmpegPath: config.ffmpegPath,
      format: 'gif',
      width: 320,
      height: 200,
      gifMaxBytes,
      passTimeoutMs: 60_000,
    });

  it('keeps the recording as it is under the cap', async () => {
    const gif = await encode(8 * 1024 * 1024);
    expect(gif).toMatchObject({ fps: 12, scale: 1 });
    expect(await probeVideo(gif.path)).toMatchObject({ codec: 'gif', width: 320, height: 200, frames: 12 });
  });

  it('over the cap: half the frame rate first, the length kept', async () => {
    const whole = await encode(8 * 1024 * 1024);
    const gif = await encode(Math.round(whole.size * 0.75));
    expect(gif).toMatchObject({ fps: 6, scale: 1 });
    expect(gif.size).toBeLessThanOrEqual(whole.size * 0.75);
    expect(readFileSync(gif.path).length).toBe(gif.size);
    const probe = await probeVideo(gif.path);
    expect(probe).toMatchObject({ width: 320, height: 200, frames: 6 });
    expect(Math.abs(probe.durationS - 1)).toBeLessThanOrEqual(1 / 6);
  });

  it('still over: also half the width and height', async () => {
    const whole = await encode(8 * 1024 * 1024);
    const gif = await encode(Math.round(whole.size * 0.3));
    expect(gif).toMatchObject({ fps: 6, scale: 0.5 });
    expect(await probeVideo(gif.path)).toMatchObject({ width: 160, height: 100, frames: 6 });
  });

  it('still over after both: AnimationTooLargeError with the message customers see', async () => {
    await expect(encode(65_536)).rejects.toThrow(new AnimationTooLargeError(65_536));
    await expect(encode(65_536)).rejects.toThrow('animation larger than 65536 bytes');
  });

  it('a long GIF that a sample of its frames shows far over the cap skips that attempt (never encoded), and keeps its length', async () => {
    const longDir = mkdtempSync(join(tmpdir(), 'glimpse-gif-sample-'));
    try {
      // 4 s of noise: 48 frames at 12 fps (~3.9 MB), 24 at 6 fps (~1.9 MB); the cap between them, the whole 1.2× over it.
      const long = await noiseRecording(config.ffmpegPath, longDir, 4);
      const gif = await encodeAnimation(long, {
        ffmpegPath: config.ffmpegPath,
        format: 'gif',
        width: 320,
        height: 200,
        gifMaxBytes: 3 * 1024 * 1024,
        passTimeoutMs: 60_000,
      });
      expect(gif).toMatchObject({ fps: 6, scale: 1 });
      expect(existsSync(join(longDir, 'animation-0.gif'))).toBe(false);
      const probe = await probeVideo(gif.path);
      expect(probe).toMatchObject({ width: 320, height: 200, frames: 24 });
      expect(Math.abs(probe.durationS - 4)).toBeLessThanOrEqual(1 / 6);
    } finally {
      rmSync(longDir, { recursive: true, force: true });
    }
  });
});
