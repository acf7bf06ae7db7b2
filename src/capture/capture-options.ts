/**
 * The capture options (CONTRACT.md, "Capture options"), declared once in {@link CAPTURE_OPTION_TABLE}:
 * each entry gives an option's type and limits, default, one-line doc, example, whether browser
 * session runs take it too, its conflicts with other options and how it resolves. The REST DTOs,
 * OpenAPI properties, upload form fields, MCP arguments and tool text, the session options of runs,
 * the resolved {@link CaptureOptions} and (through the OpenAPI document) the SDK CLI's flags are all
 * derived from it: docs/capture-options.md says how, and how to add an option. The job stores the
 * resolved options in its `options` jsonb column, so a new option needs no migration.
 *
 * The session options (viewport, scale, device, identity, headers, cookies, media, blockers) form
 * {@link SessionOptions}, which browser session runs reuse (CONTRACT.md, "Browser session runs");
 * `session-options.ts` applies them to a context.
 *
 * This is the public entry; the parts live by what they do: `capture-options-schemas.ts` (value types
 * and limits), `capture-options-table.ts` (the table), `capture-options-derived.ts` (what is derived
 * from it), `capture-options-resolution.ts` (conflicts, defaults, budget applied to a request) and
 * `capture-options-cache.ts` (the capture cache's key and freshness).
 */
export {
  ANIMATION_EASINGS,
  animationLengthMs,
  BLOCKABLE_RESOURCE_TYPES,
  CAPTURE_LIMITS,
  DEFAULT_LOCALE,
  DEVICE_NAMES,
  isLocale,
  isTimeZone,
  PDF_PAPERS,
  THUMBNAIL_FITS,
  WAIT_UNTIL,
} from './capture-options-schemas';
export type {
  AnimationEasing,
  AnimationOptions,
  BlockableResourceType,
  CaptureCookie,
  ClipRect,
  Geolocation,
  PdfOptions,
  PdfPaper,
  ThumbnailFit,
  ThumbnailOptions,
  WaitUntil,
} from './capture-options-schemas';
export * from './capture-options-table';
export * from './capture-options-derived';
export * from './capture-options-resolution';
export * from './capture-options-cache';
