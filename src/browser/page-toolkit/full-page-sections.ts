import sharp from 'sharp';
import type { CDPSession } from 'playwright';
import { captureScreenshot, imageTooLarge, PageBox, ScreenshotParams } from './screenshot';

/**
 * Tallest image Chromium renders in one piece, image px: its largest texture. A taller capture is
 * taken in sections of at most this height and stitched (CONTRACT.md, "Capture options, second set":
 * `fullPageMaxHeight`).
 */
export const SECTION_MAX_IMAGE_HEIGHT_PX = 16_384;

/** Tallest WebP image, px (the format's own limit: 14-bit dimensions). */
export const WEBP_MAX_HEIGHT_PX = 16_383;

/** One section of a stitched capture: its clip in page coordinates (CSS px) and where it goes in the image (image px). */
export interface CaptureSection {
  clip: PageBox;
  /** Top of the section in the stitched image, image px. */
  top: number;
}

/**
 * The sections a capture of `clip` (CSS px) at `scale` image px per CSS px is taken in: stacked from
 * the clip's top, each at most `maxSectionImagePx` image px tall (`floor(maxSectionImagePx / scale)`
 * CSS px, at least 1), the last one shorter; one section when the whole fits. `top` is the section's
 * page offset in image px, rounded (at a fractional scale a section may overlap the one before by a
 * pixel row, never leave a gap, since the sections are stitched from the top in order).
 */
export function planSections(clip: PageBox, scale: number, maxSectionImagePx = SECTION_MAX_IMAGE_HEIGHT_PX): CaptureSection[] {
  const sectionHeight = Math.max(1, Math.floor(maxSectionImagePx / scale));
  const sections: CaptureSection[] = [];
  for (let offset = 0; offset < clip.height; offset += sectionHeight) {
    sections.push({
      clip: { x: clip.x, y: clip.y + offset, width: clip.width, height: Math.min(sectionHeight, clip.height - offset) },
      top: Math.round(offset * scale),
    });
  }
  return sections;
}

/**
 * A screenshot of any height (CONTRACT.md, "Capture options, second set": `fullPageMaxHeight`): as
 * {@link captureScreenshot} when the image is at most {@link SECTION_MAX_IMAGE_HEIGHT_PX} tall; else
 * the clip is captured in {@link planSections} sections, each a lossless PNG, and sharp (libvips)
 * places them on one canvas and encodes the result once in the requested format and quality. The
 * size cap (`params.cap`, `MAX_IMAGE_PIXELS`) is checked for the whole image before anything is
 * captured (throws {@link imageTooLarge}'s failure). Memory: the sections' encoded PNGs, plus what
 * libvips holds while it streams the stitched image to the encoder (it renders the canvas in strips,
 * never whole). Throws what {@link captureScreenshot} throws.
 */
export async function captureTallScreenshot(cdp: CDPSession, params: ScreenshotParams): Promise<Buffer> {
  const { clip, cap } = params;
  const scale = clip.scale * cap.deviceScale;
  if (clip.width * clip.height * scale ** 2 > cap.maxPixels) throw imageTooLarge(cap.maxPixels);
  const sections = planSections(clip, scale);
  if (sections.length === 1) return captureScreenshot(cdp, params);
  const images: Buffer[] = [];
  for (const section of sections) {
    images.push(await captureScreenshot(cdp, { ...params, format: 'png', quality: null, clip: { ...section.clip, scale: clip.scale } }));
  }
  const width = Math.round(clip.width * scale);
  const height = Math.round(clip.height * scale);
  const opaque = params.format === 'jpeg';
  const canvas = sharp({
    create: { width, height, channels: 4, background: opaque ? { r: 255, g: 255, b: 255, alpha: 1 } : { r: 0, g: 0, b: 0, alpha: 0 } },
    limitInputPixels: false,
  }).composite(images.map((input, i) => ({ input, top: sections[i].top, left: 0, limitInputPixels: false })));
  const quality = params.quality ?? undefined;
  if (params.format === 'jpeg') return canvas.jpeg({ quality }).toBuffer();
  if (params.format === 'webp') return canvas.webp({ quality }).toBuffer();
  return canvas.png().toBuffer();
}
