import { execFileSync } from 'node:child_process';

/** ffprobe's view of a video file: codec, pixel format, frame size (px), duration (s), frame rate (frames per second) and frames. */
export interface VideoProbe {
  codec: string;
  pixelFormat: string;
  width: number;
  height: number;
  durationS: number;
  /** The stream's frame rate (`r_frame_rate`), frames per second. */
  fps: number;
  /** Frames decoded (`-count_frames`). */
  frames: number;
}

/** What ffprobe says of the first video stream of the file at `path` (it decodes every frame to count them). */
export function probeVideo(path: string): VideoProbe {
  const out = JSON.parse(
    execFileSync('ffprobe', [
      '-v',
      'error',
      '-count_frames',
      '-print_format',
      'json',
      '-show_entries',
      'stream=codec_name,pix_fmt,width,height,r_frame_rate,nb_read_frames:format=duration',
      path,
    ]).toString(),
  );
  const stream = out.streams[0];
  const [num, den] = String(stream.r_frame_rate).split('/').map(Number);
  return {
    codec: stream.codec_name,
    pixelFormat: stream.pix_fmt,
    width: stream.width,
    height: stream.height,
    durationS: Number(out.format.duration),
    fps: num / (den || 1),
    frames: Number(stream.nb_read_frames),
  };
}

/** Frame `index` (from 0) of the video at `path`, decoded by ffmpeg as a PNG. */
export function videoFrame(path: string, index: number): Buffer {
  return execFileSync(
    'ffmpeg',
    ['-v', 'error', '-i', path, '-vf', `select=eq(n\\,${index})`, '-frames:v', '1', '-f', 'image2pipe', '-c:v', 'png', 'pipe:1'],
    { maxBuffer: 64 * 1024 * 1024 },
  );
}

/** Whether `data` starts with the EBML magic of Matroska/WebM files. */
export function isWebm(data: Buffer): boolean {
  return data.subarray(0, 4).toString('hex') === '1a45dfa3';
}
