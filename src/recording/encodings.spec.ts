import { ANIMATION_FORMATS } from '../results/result-formats';
import { EncodeJob, VIDEO_ENCODINGS } from './encodings';

const JOB: EncodeJob = {
  input: '/tmp/frames.mjpeg',
  width: 801,
  height: 601,
  fps: 25,
  scale: 1,
  output: '/tmp/out',
  scratch: '/tmp/palette.png',
};

/** The value following `flag` in one pass's arguments (its first use), and following its last use (an output option). */
const after = (args: string[], flag: string): string | undefined => args[args.indexOf(flag) + 1];
const lastAfter = (args: string[], flag: string): string | undefined => args[args.lastIndexOf(flag) + 1];

describe('the output kinds of the recorder (docs/animated-captures.md, "One recorder")', () => {
  it('each writes a result file extension and reads the frames at their rate', () => {
    for (const encoding of Object.values(VIDEO_ENCODINGS)) {
      expect(ANIMATION_FORMATS).toContain(encoding.ext);
      for (const pass of encoding.passes(JOB)) {
        expect(after(pass, '-framerate')).toBe('25');
        expect(after(pass, '-i')).toBe(JOB.input);
      }
    }
  });

  it('mp4: H.264, yuv420p padded to even sizes, index first (CONTRACT.md, "Animated captures")', () => {
    const [pass, ...more] = VIDEO_ENCODINGS.mp4.passes(JOB);
    expect(more).toEqual([]);
    expect(lastAfter(pass, '-c:v')).toBe('libx264');
    expect(lastAfter(pass, '-movflags')).toBe('+faststart');
    expect(after(pass, '-pix_fmt')).toBe('yuv420p');
    expect(after(pass, '-vf')).toBe('scale=801:601:flags=bicubic,pad=ceil(iw/2)*2:ceil(ih/2)*2,format=yuv420p');
  });

  it('webm: VP9; a run: VP8 from standard input', () => {
    expect(VIDEO_ENCODINGS.webm.passes(JOB)[0]).toContain('libvpx-vp9');
    const [run] = VIDEO_ENCODINGS['run-webm'].passes({ ...JOB, input: 'pipe:0' });
    expect(run).toContain('libvpx');
    expect(after(run, '-i')).toBe('pipe:0');
  });

  it('gif: a palette pass counting one pixel in 4 × 4, then a pass mapping the frames onto it, at the scale of a fallback', () => {
    const [palette, frames] = VIDEO_ENCODINGS.gif.passes({ ...JOB, fps: 12, scale: 0.5 });
    expect(palette[palette.length - 1]).toBe(JOB.scratch);
    expect(after(palette, '-framerate')).toBe('12');
    expect(after(palette, '-vf')).toBe('scale=ceil(iw/4):ceil(ih/4):flags=neighbor,palettegen=stats_mode=diff');
    expect(frames).toEqual(expect.arrayContaining(['-i', JOB.scratch]));
    expect(after(frames, '-lavfi')).toContain('scale=401:301:flags=lanczos[frames];[frames][1:v]paletteuse');
    expect(lastAfter(frames, '-f')).toBe('gif');
  });

  it('gif: an encoding stops just past maxBytes; its size sample encodes the same way and reports each frame on standard output', () => {
    const [, frames] = VIDEO_ENCODINGS.gif.passes({ ...JOB, maxBytes: 1000 });
    expect(after(frames, '-fs')).toBe('1001');
    expect(VIDEO_ENCODINGS.gif.passes(JOB)[1]).not.toContain('-fs');
    const sample = VIDEO_ENCODINGS.gif.sizeSample(JOB);
    expect(after(sample, '-lavfi')).toBe(
      'split[whole][copy];[copy]scale=ceil(iw/4):ceil(ih/4):flags=neighbor,palettegen=stats_mode=diff[palette];' +
        '[whole]scale=801:601:flags=lanczos[frames];[frames][palette]paletteuse=dither=bayer:bayer_scale=5:diff_mode=rectangle',
    );
    expect(sample.slice(-5)).toEqual(['-c:v', 'gif', '-f', 'framecrc', '-']);
  });
});
