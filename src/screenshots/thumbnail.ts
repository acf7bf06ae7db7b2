import sharp from 'sharp';
import type { CaptureResult } from '../capture/capture-engine';
import type { CaptureOptions, ThumbnailOptions } from '../capture/capture-options';
import { ImageFormat, isImageFormat } from '../results/result-formats';
import type { ResultFilesService } from '../storage/result-files.service';

/**
 * A downscaled copy of a captured image (CONTRACT.md, "Capture options, second set": `thumbnail`), in
 * the image's own format (jpeg and webp at the capture's `quality`), with sharp (libvips):
 * - `inside` (default): the whole image within `width` × `height` (or `width` wide when no height is
 *   given), aspect ratio kept, never enlarged;
 * - `cover`: exactly `width` × `height`, the image scaled to fill it and cut, keeping its top (the part
 *   of a full page a reader sees first);
 * - `contain`: exactly `width` × `height`, the whole image centred in it, padded with transparency
 *   (white in jpeg).
 * Without `height`, `cover` and `contain` scale to `width` as `inside` does, enlarging a narrower image.
 * The image is read row by row (libvips' sequential access), so a tall full page is shrunk without
 * being held decoded whole; `maxPixels` (`MAX_IMAGE_PIXELS`) bounds what is decoded at all. Sizes in px.
 * Throws sharp's error for an image it cannot read.
 */
export async function renderThumbnail(
  image: Buffer,
  format: ImageFormat,
  thumbnail: ThumbnailOptions,
  quality: number | null,
  maxPixels: number,
): Promise<Buffer> {
  const transparent = format !== 'jpeg';
  const pipeline = sharp(image, { sequentialRead: true, limitInputPixels: maxPixels }).resize({
    width: thumbnail.width,
    ...(thumbnail.height !== null ? { height: thumbnail.height } : {}),
    fit: thumbnail.fit,
    position: thumbnail.fit === 'cover' ? 'top' : 'centre',
    withoutEnlargement: thumbnail.fit === 'inside',
    background: transparent ? { r: 0, g: 0, b: 0, alpha: 0 } : { r: 255, g: 255, b: 255, alpha: 1 },
  });
  if (format === 'png') return pipeline.png().toBuffer();
  if (format === 'jpeg') return pipeline.jpeg(quality !== null ? { quality } : {}).toBuffer();
  return pipeline.webp(quality !== null ? { quality } : {}).toBuffer();
}

/**
 * The capture's thumbnail hook: when the job asked for a `thumbnail` and the capture made an image,
 * renders it ({@link renderThumbnail}) and stores it beside the result as a result file of its own
 * (served at `/files/…` like the result, under the same rules); returns its file name, else null. An
 * animation always has one (CONTRACT.md, "Animated captures": `thumbnailUrl` is the first frame as PNG,
 * or as `thumbnail` asks): its poster, rendered as `thumbnail` asks when given.
 */
export async function saveThumbnail(
  files: Pick<ResultFilesService, 'save'>,
  result: Pick<CaptureResult, 'image' | 'format' | 'poster'>,
  options: Pick<CaptureOptions, 'thumbnail' | 'quality'>,
  maxPixels: number,
): Promise<string | null> {
  if (result.poster) {
    const poster = options.thumbnail ? await renderThumbnail(result.poster, 'png', options.thumbnail, null, maxPixels) : result.poster;
    return files.save(poster, 'png');
  }
  if (!options.thumbnail || !result.image || !isImageFormat(result.format)) return null;
  const thumbnail = await renderThumbnail(result.image, result.format, options.thumbnail, options.quality, maxPixels);
  return files.save(thumbnail, result.format);
}
