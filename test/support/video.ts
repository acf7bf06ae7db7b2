import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

/** ffprobe and ffmpeg run without blocking this process's event loop, where an in-process test app serves requests. */
const run = promisify(execFile);

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
export async function probeVideo(path: string): Promise<VideoProbe> {
  const out = JSON.parse(
    (
      await run('ffprobe', [
        '-v',
        'error',
        '-count_frames',
        '-print_format',
        'json',
        '-show_entries',
        'stream=codec_name,pix_fmt,width,height,r_frame_rate,nb_read_frames:format=duration',
        path,
      ])
    ).stdout,
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
export async function videoFrame(path: string, index: number): Promise<Buffer> {
  const args = ['-v', 'error', '-i', path, '-vf', `select=eq(n\\,${index})`, '-frames:v', '1', '-f', 'image2pipe', '-c:v', 'png', 'pipe:1'];
  return (await run('ffmpeg', args, { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 })).stdout;
}

/** Whether `data` starts with the EBML magic of Matroska/WebM files. */
export function isWebm(data: Buffer): boolean {
  return data.subarray(0, 4).toString('hex') === '1a45dfa3';
}
