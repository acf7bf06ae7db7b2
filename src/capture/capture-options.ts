import { IMAGE_FORMATS, ImageFormat } from './image-format';

/**
 * The capture options: one value type, its limits and defaults, read by the REST DTOs, the MCP tool
 * schema, the job entity mapping, the capture engine and the event payloads (issue 10).
 *
 * Adding an option: add it to {@link CaptureOptions} (resolved value, internal name and unit), to
 * {@link CaptureOptionsInput} (public name), to {@link CAPTURE_OPTION_FIELDS} (its public schema, from
 * which the validation, the OpenAPI property and the MCP argument are derived), to
 * {@link resolveCaptureOptions}, a `@CaptureOption.x()` line in the two screenshot DTOs, and its use in
 * the capture engine. The job stores the resolved options in its `options` jsonb column, so no
 * migration is needed.
 */

/** Limits of the capture options (CONTRACT.md, "Screenshot jobs"; spec section 2.1). Sizes in CSS px, times in ms. */
export const CAPTURE_LIMITS = {
  urlMaxLength: 2048,
  width: { min: 100, max: 3840, default: 1280 },
  height: { min: 100, max: 4320, default: 800 },
  delayMs: { min: 0, max: 10_000, default: 0 },
  /** Tallest full-page capture, px (Chromium's largest texture); taller pages are clipped to it (README, "Full page"). */
  fullPageMaxHeightPx: 16_384,
} as const;

/** The options of one capture with every default applied. Sizes in CSS px, times in ms. */
export interface CaptureOptions {
  /** Viewport width. */
  width: number;
  /** Viewport height (with `fullPage` the image is as tall as the page, up to the cap). */
  height: number;
  fullPage: boolean;
  format: ImageFormat;
  /** Wait after the `load` event. */
  delayMs: number;
}

/** The options as a customer sends them (REST body, upload form fields, MCP arguments), all optional. */
export interface CaptureOptionsInput {
  width?: number;
  height?: number;
  fullPage?: boolean;
  format?: ImageFormat;
  /** ms */
  delay?: number;
}

/** Every default of {@link CaptureOptions}. */
export const DEFAULT_CAPTURE_OPTIONS: Readonly<CaptureOptions> = Object.freeze({
  width: CAPTURE_LIMITS.width.default,
  height: CAPTURE_LIMITS.height.default,
  fullPage: false,
  format: 'png',
  delayMs: CAPTURE_LIMITS.delayMs.default,
});

/** A public capture option's JSON Schema (OpenAPI 3.1 and MCP `inputSchema` alike). */
export type CaptureOptionSchema =
  | { type: 'integer'; minimum: number; maximum: number; default: number; description: string }
  | { type: 'boolean'; default: boolean; description: string }
  | { type: 'string'; enum: readonly string[]; default: string; description: string };

const L = CAPTURE_LIMITS;

/**
 * The public schema of every option, keyed by its public name: the single source of the REST
 * validation and OpenAPI properties (`CaptureOption` decorators) and of the MCP `take_screenshot` arguments.
 */
export const CAPTURE_OPTION_FIELDS: { readonly [K in keyof Required<CaptureOptionsInput>]: CaptureOptionSchema } = {
  width: { type: 'integer', minimum: L.width.min, maximum: L.width.max, default: L.width.default, description: 'Viewport width in CSS px.' },
  height: {
    type: 'integer',
    minimum: L.height.min,
    maximum: L.height.max,
    default: L.height.default,
    description: 'Viewport height in CSS px (with fullPage the image is as tall as the page).',
  },
  fullPage: {
    type: 'boolean',
    default: false,
    description: `Capture the whole scrollable page instead of the viewport only (height capped at ${L.fullPageMaxHeightPx.toLocaleString('en-US')} px; the job then says \`clipped\`).`,
  },
  format: { type: 'string', enum: IMAGE_FORMATS, default: 'png', description: 'Image format.' },
  delay: {
    type: 'integer',
    minimum: L.delayMs.min,
    maximum: L.delayMs.max,
    default: L.delayMs.default,
    description: 'Milliseconds to wait after the page has loaded before capturing (for animations or late content).',
  },
};

/** Applies the defaults to validated input. */
export function resolveCaptureOptions(input: CaptureOptionsInput): CaptureOptions {
  return {
    width: input.width ?? DEFAULT_CAPTURE_OPTIONS.width,
    height: input.height ?? DEFAULT_CAPTURE_OPTIONS.height,
    fullPage: input.fullPage ?? DEFAULT_CAPTURE_OPTIONS.fullPage,
    format: input.format ?? DEFAULT_CAPTURE_OPTIONS.format,
    delayMs: input.delay ?? DEFAULT_CAPTURE_OPTIONS.delayMs,
  };
}

/**
 * The longest one capture with `options` may take, ms: navigation (`CAPTURE_TIMEOUT_MS`) + `delay` +
 * scroll and screenshot (`CAPTURE_TIMEOUT_MS` again) (README, "Time budget"). Without `options`, the
 * budget of the slowest options allowed (for shutdown waits and the stuck-job sweep).
 */
export function captureBudgetMs(captureTimeoutMs: number, options?: Pick<CaptureOptions, 'delayMs'>): number {
  return captureTimeoutMs + (options?.delayMs ?? CAPTURE_LIMITS.delayMs.max) + captureTimeoutMs;
}
