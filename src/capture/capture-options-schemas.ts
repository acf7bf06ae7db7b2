import { DEVICES } from './devices';
import { z } from 'zod';
import { FULL_PAGE_MAX_HEIGHT_PX } from '../results/result-formats';

/**
 * The value types of the capture options (CONTRACT.md, "Capture options"): their limits, the enums
 * they take and the zod schemas of the structured ones, with the validation messages customers see
 * (`details.fields[].message`). The options table (`capture-options-table.ts`) builds on them.
 */

/** Limits of the capture options (CONTRACT.md, "Screenshot jobs" and "Capture options"). Sizes in CSS px, times in ms. */
export const CAPTURE_LIMITS = {
  urlMaxLength: 2048,
  width: { min: 100, max: 3840, default: 1280 },
  height: { min: 100, max: 4320, default: 800 },
  delayMs: { min: 0, max: 10_000, default: 0 },
  /** Tallest full-page capture, px (Chromium's largest texture); taller pages are clipped to it (docs/capture-engine.md#full-page). */
  fullPageMaxHeightPx: FULL_PAGE_MAX_HEIGHT_PX,
  selectorMaxLength: 512,
  clipMaxSize: 16_384,
  /** Largest `clip.x` / `clip.y`, px (CONTRACT.md sets only the lower bound; this keeps the value an honest page coordinate). */
  clipMaxOffset: 1_000_000,
  scale: { min: 1, max: 3, default: 1 },
  quality: { min: 1, max: 100, default: 85 },
  hideSelectorsMax: 50,
  /** Characters of `css` and of `javascript`. */
  codeMaxLength: 65_536,
  userAgentMaxLength: 1024,
  headersMax: 50,
  headerValueMaxLength: 4096,
  cookiesMax: 50,
  cookieValueMaxLength: 4096,
  /** Patterns of `blockUrls`, and characters of each. */
  blockUrlsMax: 50,
  blockUrlMaxLength: 512,
  /** Selectors of `mask`. */
  maskMax: 50,
  /** Tallest stitched full-page image, image px (`fullPageMaxHeight`). */
  fullPageMaxHeight: { min: 100, max: 65_000, default: FULL_PAGE_MAX_HEIGHT_PX },
  /** Sides of the `thumbnail` box, px. */
  thumbnailSide: { min: 16, max: 1_920 },
  /** Seconds. */
  cacheTtlS: { min: 60, max: 2_592_000, default: 14_400 },
  /** The `animation` option (CONTRACT.md, "Animated captures"): ms, frames per second, px. */
  animation: {
    durationMs: { min: 1_000, max: 30_000, default: 5_000 },
    fps: { min: 5, max: 30, default: 25, gifDefault: 12 },
    startDelayMs: { min: 0, max: 5_000, default: 500 },
    pauseAtEndMs: { min: 0, max: 5_000, default: 500 },
    scrollToMaxPx: 1_000_000,
  },
} as const;

const L = CAPTURE_LIMITS;

/** Navigation milestones of `waitUntil` (Playwright's names; `networkidle`: no request for 500 ms). */
export const WAIT_UNTIL = ['load', 'domcontentloaded', 'networkidle'] as const;
export type WaitUntil = (typeof WAIT_UNTIL)[number];

/** Paper sizes of `pdf.paper` (Playwright's `page.pdf` formats). */
export const PDF_PAPERS = ['A3', 'A4', 'A5', 'Legal', 'Letter', 'Tabloid'] as const;
export type PdfPaper = (typeof PDF_PAPERS)[number];

/** Playwright resource types `blockResources` may name (CONTRACT.md, "Capture options, second set"). */
export const BLOCKABLE_RESOURCE_TYPES = ['image', 'media', 'font', 'stylesheet', 'script', 'xhr', 'fetch', 'websocket', 'other'] as const;
export type BlockableResourceType = (typeof BLOCKABLE_RESOURCE_TYPES)[number];

/** Device names of `device`: Playwright's device descriptors (`playwright.devices`). */
export const DEVICE_NAMES = Object.keys(DEVICES).sort();

/** The default locale (`navigator.language`, `Accept-Language`) when none is given. */
export const DEFAULT_LOCALE = 'en-US';

/** Request headers `headers` may not set (CONTRACT.md, "Capture options"): they belong to the browser or the connection. */
const FORBIDDEN_HEADER = /^(host|cookie|content-length|connection|transfer-encoding|upgrade|proxy-.*)$/i;

/** RFC 9110 token (header and cookie names). */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Whether `zone` is an IANA time zone name the runtime (ICU, as Chromium's) knows. */
export function isTimeZone(zone: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(zone)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** Whether `tag` is a well-formed BCP 47 language tag. */
export function isLocale(tag: string): boolean {
  try {
    return Intl.getCanonicalLocales(tag).length === 1;
  } catch {
    return false;
  }
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** A string of well-formed Unicode (no lone surrogates: PostgreSQL and the browser cannot take them). */
export const text = () =>
  z.string('must be a string').refine((s) => !LONE_SURROGATE.test(s), 'must be well-formed Unicode (no lone surrogates)');

export const selectorSchema = () =>
  text().min(1, 'must not be empty').max(L.selectorMaxLength, `must be at most ${L.selectorMaxLength} characters`);

export const int = (min: number, max: number) =>
  z.int('must be an integer').min(min, `must be at least ${min}`).max(max, `must be at most ${max}`);

export const clipSchema = z.strictObject({
  x: int(0, L.clipMaxOffset).meta({ description: 'Left edge, CSS px from the page origin.' }),
  y: int(0, L.clipMaxOffset).meta({ description: 'Top edge, CSS px from the page origin.' }),
  width: int(1, L.clipMaxSize).meta({ description: 'CSS px.' }),
  height: int(1, L.clipMaxSize).meta({ description: 'CSS px.' }),
});

export const cookieSchema = z.strictObject({
  name: z.string().min(1, 'must not be empty').max(256, 'must be at most 256 characters').regex(TOKEN, 'must be a token (RFC 9110)'),
  value: z
    .string()
    .max(L.cookieValueMaxLength, `must be at most ${L.cookieValueMaxLength} characters`)
    .regex(
      /^[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]*$/,
      'must be printable ASCII without spaces, quotes, commas, semicolons or backslashes (RFC 6265)',
    ),
  domain: z
    .string()
    .min(1, 'must not be empty')
    .max(253, 'must be at most 253 characters')
    .regex(/^\.?[A-Za-z0-9.-]+$/, 'must be a host name, optionally with a leading dot')
    .optional()
    .meta({ description: 'Default: the host of url (a host-only cookie).' }),
  path: z
    .string()
    .startsWith('/', 'must start with /')
    .max(1024, 'must be at most 1024 characters')
    .regex(/^[\x21-\x3a\x3c-\x7e]*$/, 'must not contain spaces, controls or semicolons')
    .optional(),
  secure: z.boolean('must be a boolean').optional(),
  httpOnly: z.boolean('must be a boolean').optional(),
  sameSite: z.enum(['Strict', 'Lax', 'None'], 'must be one of Strict, Lax, None').optional(),
});

export const headersSchema = z
  .record(
    z
      .string()
      .regex(TOKEN, 'must be a header name (an RFC 9110 token)')
      .refine(
        (name) => !FORBIDDEN_HEADER.test(name),
        'may not be set: Host, Cookie, Content-Length, Connection, Transfer-Encoding, Upgrade and Proxy-* are refused',
      ),
    z
      .string('must be a string')
      .max(L.headerValueMaxLength, `must be at most ${L.headerValueMaxLength} characters`)
      .regex(/^[\t\x20-\x7e\x80-\xff]*$/, 'must not contain control characters'),
  )
  .refine((h) => Object.keys(h).length <= L.headersMax, `must have at most ${L.headersMax} entries`)
  .meta({ maxProperties: L.headersMax });

/** A CSS length of `pdf.margin` as Playwright's `page.pdf` takes it: a number with px, in, cm or mm, or a bare number (px). */
const cssLength = () =>
  z.string('must be a string').regex(/^\d{1,4}(\.\d{1,4})?(px|in|cm|mm)?$/, 'must be a CSS length such as 10mm, 0.5in, 2cm or 40px');

export const pdfSchema = z.strictObject({
  paper: z
    .enum(PDF_PAPERS, `must be one of ${PDF_PAPERS.join(', ')}`)
    .optional()
    .meta({ description: 'Paper size (default A4).' }),
  landscape: z.boolean('must be a boolean').optional().meta({ description: 'Landscape orientation (default false).' }),
  printBackground: z.boolean('must be a boolean').optional().meta({ description: 'Print background colours and images (default true).' }),
  headerTemplate: text().max(L.codeMaxLength, `must be at most ${L.codeMaxLength} characters`).optional().meta({
    description:
      "HTML of each page's header; Chromium's print template classes fill in date, title, url, pageNumber and totalPages (<span class=pageNumber></span>).",
  }),
  footerTemplate: text()
    .max(L.codeMaxLength, `must be at most ${L.codeMaxLength} characters`)
    .optional()
    .meta({ description: "HTML of each page's footer, with the same classes as headerTemplate." }),
  pageRanges: z
    .string('must be a string')
    .max(256, 'must be at most 256 characters')
    .regex(/^\s*\d+(\s*-\s*\d*)?(\s*,\s*\d+(\s*-\s*\d*)?)*\s*$/, 'must be page ranges such as 1-3,5')
    .optional()
    .meta({ description: 'Pages to print, e.g. 1-3,5 (default all).' }),
  margin: z
    .strictObject({
      top: cssLength().optional(),
      right: cssLength().optional(),
      bottom: cssLength().optional(),
      left: cssLength().optional(),
    })
    .optional()
    .meta({ description: 'Page margins as CSS lengths (px, in, cm, mm; a bare number is px).' }),
  scale: z
    .number('must be a number')
    .min(0.1, 'must be at least 0.1')
    .max(2, 'must be at most 2')
    .optional()
    .meta({ description: 'Scale of the rendering, 0.1-2 (default 1).' }),
});

/** How a `thumbnail` fits its box (sharp's `fit`): inside keeps the whole image within it, cover fills it and crops, contain fills it and pads. */
export const THUMBNAIL_FITS = ['inside', 'cover', 'contain'] as const;
export type ThumbnailFit = (typeof THUMBNAIL_FITS)[number];

export const thumbnailSchema = z.strictObject({
  width: int(L.thumbnailSide.min, L.thumbnailSide.max).meta({ description: 'px.' }),
  height: int(L.thumbnailSide.min, L.thumbnailSide.max)
    .optional()
    .meta({ description: 'px; without it the height follows the aspect ratio.' }),
  fit: z
    .enum(THUMBNAIL_FITS, `must be one of ${THUMBNAIL_FITS.join(', ')}`)
    .optional()
    .meta({
      description: 'inside (default): the whole image within the box; cover: fills the box, cropped; contain: fills the box, padded.',
    }),
});

/** The `thumbnail` with its default fit: sides in px, `height` null when only the width was given. */
export interface ThumbnailOptions {
  width: number;
  height: number | null;
  fit: ThumbnailFit;
}

/** Easings of `animation.easing`: how the scroll's position follows time. */
export const ANIMATION_EASINGS = ['ease-in-out', 'linear'] as const;
export type AnimationEasing = (typeof ANIMATION_EASINGS)[number];

const A = L.animation;

/** `animation` (CONTRACT.md, "Animated captures"); every field optional, defaults in {@link AnimationOptions}. */
export const animationSchema = z.strictObject({
  scrollTo: z
    .union(
      [z.literal('bottom'), int(0, A.scrollToMaxPx)],
      `must be "bottom" or an integer from 0 to ${A.scrollToMaxPx.toLocaleString('en-US')}`,
    )
    .optional()
    .meta({ description: 'Where the scroll ends: "bottom" (default; the page bounded by fullPageMaxHeight) or a y position in CSS px.' }),
  durationMs: int(A.durationMs.min, A.durationMs.max)
    .optional()
    .meta({ description: `Length of the scroll, ms (default ${A.durationMs.default}).` }),
  fps: int(A.fps.min, A.fps.max)
    .optional()
    .meta({ description: `Frames per second (default ${A.fps.default}; gif ${A.fps.gifDefault}).` }),
  easing: z
    .enum(ANIMATION_EASINGS, `must be one of ${ANIMATION_EASINGS.join(', ')}`)
    .optional()
    .meta({ description: 'ease-in-out (default): slow at both ends; linear: a constant speed.' }),
  startDelayMs: int(A.startDelayMs.min, A.startDelayMs.max)
    .optional()
    .meta({ description: `Still time before the scroll starts, ms (default ${A.startDelayMs.default}).` }),
  pauseAtEndMs: int(A.pauseAtEndMs.min, A.pauseAtEndMs.max)
    .optional()
    .meta({ description: `Still time after the scroll ends, ms (default ${A.pauseAtEndMs.default}).` }),
  scrollBack: z
    .boolean('must be a boolean')
    .optional()
    .meta({ description: 'Scroll back to the top afterwards, over durationMs again (default false).' }),
});

/**
 * The `animation` with its defaults (CONTRACT.md, "Animated captures"): times in ms, `scrollTo` a y
 * position in CSS px or `bottom`. The file plays for {@link animationLengthMs}.
 */
export interface AnimationOptions {
  scrollTo: 'bottom' | number;
  durationMs: number;
  fps: number;
  easing: AnimationEasing;
  startDelayMs: number;
  pauseAtEndMs: number;
  scrollBack: boolean;
}

/** How long an animation plays, ms: startDelay + duration (twice with scrollBack) + pauseAtEnd (CONTRACT.md, "Animated captures"). */
export function animationLengthMs(animation: AnimationOptions): number {
  return animation.startDelayMs + animation.durationMs * (animation.scrollBack ? 2 : 1) + animation.pauseAtEndMs;
}

/** `{ x, y, width, height }` in CSS px. */
export type ClipRect = z.output<typeof clipSchema>;
/** A cookie of `cookies`. */
export type CaptureCookie = z.output<typeof cookieSchema>;
/** The `pdf` settings with defaults applied. */
export interface PdfOptions {
  paper: PdfPaper;
  landscape: boolean;
  printBackground: boolean;
  /** Header and footer HTML (Chromium's print templates); either one turns both on. */
  headerTemplate?: string;
  footerTemplate?: string;
  /** e.g. `1-3,5`. */
  pageRanges?: string;
  /** CSS lengths. */
  margin?: { top?: string; right?: string; bottom?: string; left?: string };
  /** 0.1–2. */
  scale?: number;
}

/** The `geolocation` with its default accuracy: degrees, accuracy in metres. */
export interface Geolocation {
  latitude: number;
  longitude: number;
  accuracy: number;
}
