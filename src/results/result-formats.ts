/*
 * What a capture result can be: its formats, their MIME types and the tallest full-page image. The
 * vocabulary shared by the modules that produce results (`capture/`, `screenshots/`, `runs/`) and those
 * that only describe or serve them (`storage/`, `events/`, `webhooks/`, `metrics/`), so that the latter
 * need not import the capture procedure (docs/ARCHITECTURE.md, "Modules (`src/`)": `webhooks/` never uses
 * `capture/`). Imports nothing.
 */

/** Image formats a capture can produce (spec section 2.1). */
export const IMAGE_FORMATS = ['png', 'jpeg', 'webp'] as const;
export type ImageFormat = (typeof IMAGE_FORMATS)[number];

/** Whether `format` is an {@link ImageFormat}. */
export function isImageFormat(format: string | null | undefined): format is ImageFormat {
  return (IMAGE_FORMATS as readonly string[]).includes(format as string);
}

/**
 * Formats of an animated capture: a video of the page scrolling (CONTRACT.md, "Animated captures"):
 * MP4 (H.264), WebM (VP9) or GIF.
 */
export const ANIMATION_FORMATS = ['mp4', 'webm', 'gif'] as const;
export type AnimationFormat = (typeof ANIMATION_FORMATS)[number];

/** Whether `format` is an {@link AnimationFormat}. */
export function isAnimationFormat(format: string | null | undefined): format is AnimationFormat {
  return (ANIMATION_FORMATS as readonly string[]).includes(format as string);
}

/**
 * What a screenshot job can produce: an image, a PDF of the page, or an animation (CONTRACT.md,
 * "Capture options": `format`, and "Animated captures").
 */
export const RESULT_FORMATS = [...IMAGE_FORMATS, 'pdf', ...ANIMATION_FORMATS] as const;
export type ResultFormat = (typeof RESULT_FORMATS)[number];

/**
 * What a job's `format` can be: a result format, or `none` (no image: only the extracted content,
 * docs/CONTRACT.md "Extracted content").
 */
export const JOB_FORMATS = [...RESULT_FORMATS, 'none'] as const;
export type JobFormat = (typeof JOB_FORMATS)[number];

/** MIME type per result format (the `Content-Type` of `/files/…`). */
export const RESULT_CONTENT_TYPES: Record<ResultFormat, string> = {
  png: 'image/png',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  pdf: 'application/pdf',
  mp4: 'video/mp4',
  webm: 'video/webm',
  gif: 'image/gif',
};

/**
 * Tallest full-page capture, px (Chromium's largest texture); taller pages are clipped to it and the
 * result says `clipped: true` (docs/CONTRACT.md, "Capture options"). Read by the capture limits and
 * by the documentation of `clipped` in job and event payloads.
 */
export const FULL_PAGE_MAX_HEIGHT_PX = 16_384;
