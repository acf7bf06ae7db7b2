import { execFileSync } from 'node:child_process';

/** ffprobe's view of a video file: codec, frame size (px) and duration (s). */
export function probeVideo(path: string): { codec: string; width: number; height: number; durationS: number } {
  const out = JSON.parse(
    execFileSync('ffprobe', [
      '-v',
      'error',
      '-print_format',
      'json',
      '-show_entries',
      'stream=codec_name,width,height:format=duration',
      path,
    ]).toString(),
  );
  const stream = out.streams[0];
  return { codec: stream.codec_name, width: stream.width, height: stream.height, durationS: Number(out.format.duration) };
}

/** Whether `data` starts with the EBML magic of Matroska/WebM files. */
export function isWebm(data: Buffer): boolean {
  return data.subarray(0, 4).toString('hex') === '1a45dfa3';
}
