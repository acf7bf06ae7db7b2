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
  /** Frames per second of the input (each frame lasts 1/inputFps s). */
  inputFps: number;
  /** Size of the video at scale 1: the page's viewport. */
  width: number;
  height: number;
  /** Frames per second of the output, at most `inputFps` (frames are dropped evenly to reach it). */
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
   * One pass encoding `job.input`, a sample of the frames already at the output's rate (`inputFps` = `fps`), as the passes
   * would, and writing the encoded size of each frame on standard output (ffmpeg's `framecrc`, bytes
   * in the 5th field); the GIF's, to foresee its size cap (docs/animated-captures.md, "GIF size cap").
   */
  sizeSample?: (job: EncodeJob) => string[];
}

/** ffmpeg's arguments reading the frames of `job`: a stream of JPEG images at the input's rate. */
const framesInput = (job: EncodeJob): string[] => [
  '-f',
  'image2pipe',
  '-c:v',
  'mjpeg',
  '-framerate',
  String(job.inputFps),
  '-i',
  job.input,
];

/** Output size at `job.scale`, px (at least 2). */
const scaled = (job: EncodeJob): { width: number; height: number } => ({
  width: Math.max(2, Math.round(job.width * job.scale)),
  height: Math.max(2, Math.round(job.height * job.scale)),
});

/**
 * The frame rate and size filters of `job`: frames dropped evenly to `fps`, every frame scaled to the
 * output size (the screencast may round odd sizes down) with the resampling `flags`.
 */
function frameFilters(job: EncodeJob, flags: string): string {
  const { width, height } = scaled(job);
  const rate = job.fps < job.inputFps ? `fps=${job.fps},` : '';
  return `${rate}scale=${width}:${height}:flags=${flags}`;
}

/** The GIF's palette pass: the frames' own 256 colours, weighted to what changes between frames. */
const GIF_PALETTE = 'palettegen=stats_mode=diff';

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
   * of the video's own colours (`palettegen`, weighted to what changes between frames), the second maps
   * the frames onto it (`paletteuse`, ordered dithering, only the changed rectangle of each frame
   * rewritten). Loops forever. Neither pass holds more than a frame. Its size sample makes the palette
   * of the sample's frames and maps them onto it in one pass (which holds the sample's frames).
   */
  gif: {
    ext: 'gif',
    passes: (job) => [
      [...framesInput(job), '-vf', `${frameFilters(job, 'lanczos')},${GIF_PALETTE}`, '-y', job.scratch],
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
      `${frameFilters(job, 'lanczos')},split[frames][copy];[copy]${GIF_PALETTE}[palette];[frames][palette]${GIF_PALETTE_USE}`,
      ...['-c:v', 'gif', '-f', 'framecrc', '-'],
    ],
  },
} as const satisfies Record<string, VideoEncoding>;

export type VideoEncodingName = keyof typeof VIDEO_ENCODINGS;
