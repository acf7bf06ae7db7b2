/** Width and height of a PNG from its IHDR chunk (bytes 16-23). Throws when the signature is wrong. */
export function pngSize(png: Buffer): { width: number; height: number } {
  if (png.subarray(0, 8).toString('hex') !== '89504e470d0a1a0a') throw new Error('not a PNG');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

/** Whether the buffer starts with the JPEG SOI marker. */
export function isJpeg(buf: Buffer): boolean {
  return buf[0] === 0xff && buf[1] === 0xd8 && buf[2] === 0xff;
}

/** Whether the buffer is a RIFF/WEBP container. */
export function isWebp(buf: Buffer): boolean {
  return buf.subarray(0, 4).toString('ascii') === 'RIFF' && buf.subarray(8, 12).toString('ascii') === 'WEBP';
}

/** A decoded 8-bit PNG: `data` holds `channels` bytes per pixel, row after row. */
export interface DecodedPng {
  width: number;
  height: number;
  channels: number;
  data: Buffer;
}

/**
 * Decodes an 8-bit, non-interlaced greyscale/RGB/RGBA PNG (what Chromium writes), undoing the
 * per-row filters (PNG spec section 9). Throws for other kinds.
 */
export function decodePng(png: Buffer): DecodedPng {
  const { width, height } = pngSize(png);
  const bitDepth = png[24];
  const colourType = png[25];
  const channels = ({ 0: 1, 2: 3, 4: 2, 6: 4 } as Record<number, number>)[colourType];
  if (bitDepth !== 8 || !channels || png[28] !== 0) throw new Error(`unsupported PNG (depth ${bitDepth}, colour type ${colourType})`);
  const chunks: Buffer[] = [];
  for (let at = 8; at < png.length;) {
    const len = png.readUInt32BE(at);
    if (png.toString('ascii', at + 4, at + 8) === 'IDAT') chunks.push(png.subarray(at + 8, at + 8 + len));
    at += len + 12;
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const raw: Buffer = require('node:zlib').inflateSync(Buffer.concat(chunks));
  const stride = width * channels;
  const data = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? data[y * stride + x - channels] : 0;
      const b = y > 0 ? data[(y - 1) * stride + x] : 0;
      const c = x >= channels && y > 0 ? data[(y - 1) * stride + x - channels] : 0;
      let predictor = 0;
      if (filter === 1) predictor = a;
      else if (filter === 2) predictor = b;
      else if (filter === 3) predictor = (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c;
        const pa = Math.abs(p - a);
        const pb = Math.abs(p - b);
        const pc = Math.abs(p - c);
        predictor = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      data[y * stride + x] = (line[x] + predictor) & 0xff;
    }
  }
  return { width, height, channels, data };
}

/** The RGB of pixel (x, y) of a decoded PNG. */
export function pixel(img: DecodedPng, x: number, y: number): [number, number, number] {
  const at = (y * img.width + x) * img.channels;
  return img.channels >= 3 ? [img.data[at], img.data[at + 1], img.data[at + 2]] : [img.data[at], img.data[at], img.data[at]];
}
