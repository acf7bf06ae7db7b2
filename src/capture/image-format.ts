/** Image formats a capture can produce (spec section 2.1). */
export const IMAGE_FORMATS = ['png', 'jpeg', 'webp'] as const;
export type ImageFormat = (typeof IMAGE_FORMATS)[number];

/** What a screenshot job can produce: an image, or a PDF of the page (CONTRACT.md, "Capture options": `format`). */
export const RESULT_FORMATS = [...IMAGE_FORMATS, 'pdf'] as const;
export type ResultFormat = (typeof RESULT_FORMATS)[number];

/** MIME type per result format (the `Content-Type` of `/files/…`). */
export const RESULT_CONTENT_TYPES: Record<ResultFormat, string> = {
  png: 'image/png',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  pdf: 'application/pdf',
};
