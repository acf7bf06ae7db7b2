import type { AnimationFormat } from '../results/result-formats';

/*
 * The output kinds of the recorder, declared once (docs/animated-captures.md, "One recorder"): each
 * entry says the file's extension and the ffmpeg passes that turn a stream of JPEG frames (the
 * browser's screencast, paced by the recorder) into it. The run's video (CONTRACT.md, "Browser session
 * runs": WebM VP8, encoded live) and the animated capture's files (CONTRACT.md, "Animated captures":
 * MP4 H.264 yuv420p with +faststart, WebM VP9, GIF with a two-pass palette) are entries here; a new
 * kind of video is a new entry.
 */

/** What one encoding turns into a file. Sizes in px, rates in frames per second. */
export interface EncodeJob {
  /** The frames: `pipe:0` (ffmpeg's standard input) or the path of a file of concatenated JPEG frames. */
  input: string;
  /** Size of the video at scale 1: the page's viewport. */
  width: number;
  height: number;
  /** Frames per second of the input and of the output (each frame lasts 1/fps s). */
  fps: number;
  /** Factor on `width` and `height` (below 1: a smaller file; the GIF size cap's last fallback). */
  scale: number;
  /** Path of the file written. */
  output: string;
  /** Path of a scratch file a pass may write and a later pass read (the GIF's palette). */
  scratch: string;
  /** Bytes the output may reach: ffmpeg stops writing just past them (`-fs`), so an output over a cap ends early. */
  maxBytes?: number;
}

/** One output kind: its extension and its ffmpeg passes (argument lists, run in order). */
export interface VideoEncoding {
  ext: AnimationFormat;
  passes: (job: EncodeJob) => string[][];
  /**
   * One pass encoding `job.input`, a sample of the frames, as the passes would, and writing the encoded size of each frame on standard output (ffmpeg's `framecrc`, bytes
   * in the 5th field); the GIF's, to foresee its size cap (docs/animated-captures.md, "GIF size cap").
   */
  sizeSample?: (job: EncodeJob) => string[];
}

/** ffmpeg's arguments reading the frames of `job`: a stream of JPEG images at its rate. */
const framesInput = (job: EncodeJob): string[] => ['-f', 'image2pipe', '-c:v', 'mjpeg', '-framerate', String(job.fps), '-i', job.input];

/** Output size at `job.scale`, px (at least 2). */
const scaled = (job: EncodeJob): { width: number; height: number } => ({
  width: Math.max(2, Math.round(job.width * job.scale)),
  height: Math.max(2, Math.round(job.height * job.scale)),
});

/** The size filter of `job`: every frame scaled to the output size (the screencast may round odd sizes down) with the resampling `flags`. */
function frameFilters(job: EncodeJob, flags: string): string {
  const { width, height } = scaled(job);
  return `scale=${width}:${height}:flags=${flags}`;
}

/**
 * The GIF's palette: the frames' own 256 colours, weighted to what changes between frames, counted on
 * one pixel in 4 × 4 (every fourth pixel of every fourth row, as they are: no averaging, so the colours
 * and their proportions stay those of the frames) for a fraction of the CPU (docs/animated-captures.md,
 * "Cost": 0.6 instead of 1.5 s for 60 frames at 1280 × 800; the frames mapped 41.8 dB PSNR from the
 * originals against 41.9 with every pixel counted, and random noise 36.1 against 36.3).
 */
const GIF_PALETTE = 'scale=ceil(iw/4):ceil(ih/4):flags=neighbor,palettegen=stats_mode=diff';

/** The GIF's mapping onto its palette (second input of the filter): ordered dithering, only each frame's changed rectangle. */
const GIF_PALETTE_USE = 'paletteuse=dither=bayer:bayer_scale=5:diff_mode=rectangle';

/** The output kinds, by name. */
export const VIDEO_ENCODINGS = {
  /** A browser session run's video: WebM VP8, encoded live at the pace of the run (realtime, one thread). */
  'run-webm': {
    ext: 'webm',
    passes: (job) => [
      [
        ...framesInput(job),
        '-vf',
        `${frameFilters(job, 'bilinear')},format=yuv420p`,
        ...['-c:v', 'libvpx', '-deadline', 'realtime', '-cpu-used', '8', '-b:v', '1M', '-crf', '10', '-threads', '1'],
        ...['-an', '-f', 'webm', '-y', job.output],
      ],
    ],
  },
  /**
   * An animated capture as MP4: H.264 (`libx264`, preset superfast, CRF 23) in 4:2:0 (`yuv420p`, what
   * every player decodes; an odd width or height is padded by 1 px, which 4:2:0 needs), with the index
   * first (`+faststart`) so a player starts before the whole file arrived.
   */
  mp4: {
    ext: 'mp4',
    passes: (job) => [
      [
        ...framesInput(job),
        '-vf',
        `${frameFilters(job, 'bicubic')},pad=ceil(iw/2)*2:ceil(ih/2)*2,format=yuv420p`,
        ...['-c:v', 'libx264', '-preset', 'superfast', '-crf', '23', '-pix_fmt', 'yuv420p', '-r', String(job.fps)],
        ...['-movflags', '+faststart', '-an', '-f', 'mp4', '-y', job.output],
      ],
    ],
  },
  /** An animated capture as WebM: VP9 (`libvpx-vp9`, constant quality CRF 33, realtime speed 8, row threads). */
  webm: {
    ext: 'webm',
    passes: (job) => [
      [
        ...framesInput(job),
        '-vf',
        `${frameFilters(job, 'bicubic')},format=yuv420p`,
        ...['-c:v', 'libvpx-vp9', '-deadline', 'realtime', '-cpu-used', '8', '-row-mt', '1', '-crf', '33', '-b:v', '0'],
        ...['-r', String(job.fps), '-an', '-f', 'webm', '-y', job.output],
      ],
    ],
  },
  /**
   * An animated capture as GIF, in two passes: the first reads every frame into a 256-colour palette
   * of the video's own colours ({@link GIF_PALETTE}), the second maps the frames onto it (`paletteuse`,
   * ordered dithering, only the changed rectangle of each frame rewritten). Loops forever. Neither pass
   * holds more than a frame. Its size sample makes the palette of the sample's frames the same way and
   * maps them onto it in one pass (which holds the sample's frames).
   */
  gif: {
    ext: 'gif',
    passes: (job) => [
      [...framesInput(job), '-vf', GIF_PALETTE, '-y', job.scratch],
      [
        ...framesInput(job),
        '-i',
        job.scratch,
        '-lavfi',
        `${frameFilters(job, 'lanczos')}[frames];[frames][1:v]${GIF_PALETTE_USE}`,
        ...['-loop', '0', ...(job.maxBytes === undefined ? [] : ['-fs', String(job.maxBytes + 1)]), '-f', 'gif', '-y', job.output],
      ],
    ],
    sizeSample: (job) => [
      ...framesInput(job),
      '-lavfi',
      `split[whole][copy];[copy]${GIF_PALETTE}[palette];[whole]${frameFilters(job, 'lanczos')}[frames];[frames][palette]${GIF_PALETTE_USE}`,
      ...['-c:v', 'gif', '-f', 'framecrc', '-'],
    ],
  },
} as const satisfies Record<string, VideoEncoding>;

export type VideoEncodingName = keyof typeof VIDEO_ENCODINGS;
