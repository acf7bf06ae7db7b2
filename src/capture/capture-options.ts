import { createHash } from 'node:crypto';
import { devices } from 'playwright';
import { z } from 'zod';
import type { FieldError } from '../common/api-error';
import { EXTRACT_KINDS, MARKDOWN_MODES } from '../results/extracted';
import { FULL_PAGE_MAX_HEIGHT_PX, JOB_FORMATS, JobFormat, RESULT_FORMATS } from '../results/result-formats';
import { DEFAULT_STORAGE_PATH, STORAGE_PATH_MAX_LENGTH, storagePathProblem } from '../results/storage-path';

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
export const DEVICE_NAMES = Object.keys(devices).sort();

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
const text = () => z.string('must be a string').refine((s) => !LONE_SURROGATE.test(s), 'must be well-formed Unicode (no lone surrogates)');

const selectorSchema = () =>
  text().min(1, 'must not be empty').max(L.selectorMaxLength, `must be at most ${L.selectorMaxLength} characters`);

const int = (min: number, max: number) =>
  z.int('must be an integer').min(min, `must be at least ${min}`).max(max, `must be at most ${max}`);

const clipSchema = z.strictObject({
  x: int(0, L.clipMaxOffset).meta({ description: 'Left edge, CSS px from the page origin.' }),
  y: int(0, L.clipMaxOffset).meta({ description: 'Top edge, CSS px from the page origin.' }),
  width: int(1, L.clipMaxSize).meta({ description: 'CSS px.' }),
  height: int(1, L.clipMaxSize).meta({ description: 'CSS px.' }),
});

const cookieSchema = z.strictObject({
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

const headersSchema = z
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

const pdfSchema = z.strictObject({
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

const thumbnailSchema = z.strictObject({
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

/** What an option's resolution may look at besides its own value: the emulated device and the result format. */
export interface ResolveContext {
  /** Playwright's descriptor of `device`, when one is given. */
  device: (typeof devices)[string] | undefined;
  format: JobFormat;
}

/**
 * One capture option, declared once (docs/capture-options.md). Everything else about the option is
 * derived from this entry: the REST DTOs and their OpenAPI properties, the upload form's field
 * conversion, the MCP arguments and tool text, the session options of runs, the resolved
 * {@link CaptureOptions} and the SDK CLI's flag (through the OpenAPI document).
 */
export interface CaptureOptionSpec<S extends z.ZodType = z.ZodType> {
  /** Type, limits and the validation messages (`details.fields[].message`). */
  schema: S;
  /** One-line doc: the OpenAPI `description`, the MCP argument's description, the CLI flag's help (first sentence). */
  doc: string;
  /** Example value shown in the OpenAPI document and the MCP schema (valid against `schema`: a unit test checks it). */
  example: unknown;
  /** Value when the option is not given (also the advertised `default`); an option without one resolves to null. */
  default?: z.output<S>;
  /** A session option: taken by browser session runs too (CONTRACT.md, "Browser session runs"). */
  session?: true;
  /** Refused together with these options (when they are given and not false): "is not allowed with X". */
  notWith?: readonly string[];
  /** The result formats the option is allowed with; another format is a 400 naming this option. */
  formats?: readonly JobFormat[];
  /** Values of this option allowed only when another option is given: `{ none: 'extract' }` → "none is only allowed with extract". */
  valueNeeds?: Readonly<Record<string, string>>;
  /** Allowed only when this boolean option is true: "is only allowed with X true". */
  onlyWithTrue?: string;
  /** Name of the resolved value in {@link CaptureOptions} when it differs (to carry the unit: `delayMs`). */
  resolvedAs?: string;
  /** The resolved value, when it is not simply the value given or the default. */
  resolve?: (value: z.output<S> | undefined, context: ResolveContext) => unknown;
  /**
   * The device pixels of the image this option asks for, when known at submission (null: none), from
   * its value as given and the resolved viewport and scale: more than `MAX_IMAGE_PIXELS` is a 400
   * (CONTRACT.md, "Capture options, second set": image size cap; docs/capture-options.md).
   */
  imagePixels?: (value: z.output<S> | undefined, size: ImageSize) => number | null;
  /** The other options {@link imagePixels} reads: the first of them given is named when this option is not. */
  imagePixelsFrom?: readonly string[];
  /** A value the service's configuration refuses (an unknown `proxy` id): the message, else null. */
  configured?: (value: z.output<S> | undefined, limits: ConfiguredOptionLimits) => string | null;
}

/** The resolved viewport (CSS px) and scale an image's size is computed from. */
export interface ImageSize {
  width: number;
  height: number;
  scale: number;
}

/**
 * The limits of the capture options that are configuration (docs/CONTRACT.md, "Configuration"):
 * {@link captureOptionConflicts} receives them from the service's `AppConfig`.
 */
export interface ConfiguredOptionLimits {
  /** `MAX_IMAGE_PIXELS`: device pixels (width × height × scale²) one image may have. */
  maxImagePixels: number;
  /** `EGRESS_PROXIES`: the upstream proxies by id (only the ids are read here); absent: none. */
  egressProxies?: Readonly<Record<string, unknown>>;
}

/** Device pixels of an image of `width` × `height` CSS px at `scale` (device pixels per CSS px). */
export function imagePixels(width: number, height: number, scale: number): number {
  return Math.ceil(width * height * scale * scale);
}

/** Declares one option: its schema, and the rest of its entry (typed against that schema). */
function option<S extends z.ZodType, const E extends Omit<CaptureOptionSpec<S>, 'schema'>>(schema: S, spec: E): E & { schema: S } {
  return { ...spec, schema };
}

/** The image formats (every result format but pdf). */
const IMAGE_FORMATS = RESULT_FORMATS.filter((f) => f !== 'pdf');

/**
 * The options table: every capture option, keyed by its public name (CONTRACT.md, "Capture options"),
 * in the order the documents list them. See docs/capture-options.md for how to add one.
 */
export const CAPTURE_OPTION_TABLE = {
  width: option(int(L.width.min, L.width.max), {
    doc: 'Viewport width in CSS px.',
    default: L.width.default,
    example: 1440,
    session: true,
    resolve: (width, { device }): number => width ?? device?.viewport.width ?? L.width.default,
    // The viewport is rendered at its scale whatever is captured of it.
    imagePixels: (_width, size) => imagePixels(size.width, size.height, size.scale),
    imagePixelsFrom: ['height', 'scale', 'device'],
  }),
  height: option(int(L.height.min, L.height.max), {
    doc: 'Viewport height in CSS px (with fullPage the image is as tall as the page).',
    default: L.height.default,
    example: 900,
    session: true,
    resolve: (height, { device }): number => height ?? device?.viewport.height ?? L.height.default,
  }),
  fullPage: option(z.boolean('must be a boolean'), {
    doc: `Capture the whole scrollable page instead of the viewport only (height capped at fullPageMaxHeight, default ${L.fullPageMaxHeightPx.toLocaleString('en-US')} image px; the job then says \`clipped\`). Not with selector or clip.`,
    default: false,
    example: true,
  }),
  format: option(z.enum(JOB_FORMATS, `must be one of ${JOB_FORMATS.join(', ')}`), {
    doc: 'Result format: an image, or pdf (an A4 PDF of the page unless pdf.paper says otherwise; not with selector, clip, scale or quality), or none (no image, only with extract).',
    default: 'png',
    example: 'webp',
    valueNeeds: { none: 'extract' },
  }),
  delay: option(int(L.delayMs.min, L.delayMs.max), {
    doc: 'Milliseconds to wait after the page has loaded (and after css and javascript) before capturing.',
    default: L.delayMs.default,
    example: 500,
    resolvedAs: 'delayMs',
  }),
  selector: option(selectorSchema(), {
    doc: 'Capture the box of the first element matching this CSS selector (not found within the capture timeout: the job fails with "selector not found"). Not with fullPage or clip.',
    example: '#pricing-table',
    notWith: ['fullPage'],
    formats: IMAGE_FORMATS,
  }),
  clip: option(clipSchema, {
    doc: `Capture this rectangle of the page (CSS px; the image is width × scale by height × scale px, at most MAX_IMAGE_PIXELS device pixels, default 100,000,000). Not with selector or fullPage.`,
    example: { x: 0, y: 0, width: 600, height: 400 },
    notWith: ['fullPage', 'selector'],
    formats: IMAGE_FORMATS,
    resolve: (clip): ClipRect | null => (clip ? { ...clip } : null),
    imagePixels: (clip, { scale }) => (clip ? imagePixels(clip.width, clip.height, scale) : null),
    imagePixelsFrom: ['scale', 'device'],
  }),
  scale: option(
    z.number('must be a number').min(L.scale.min, `must be at least ${L.scale.min}`).max(L.scale.max, `must be at most ${L.scale.max}`),
    {
      doc: 'Device scale factor: the image is width × scale by height × scale px (width × height × scale² at most MAX_IMAGE_PIXELS, default 100,000,000).',
      default: L.scale.default,
      example: 2,
      session: true,
      formats: IMAGE_FORMATS,
      resolve: (scale, { device }): number => scale ?? device?.deviceScaleFactor ?? L.scale.default,
    },
  ),
  quality: option(int(L.quality.min, L.quality.max), {
    doc: `Compression quality of jpeg and webp (not with png or pdf).`,
    default: L.quality.default,
    example: 70,
    formats: ['jpeg', 'webp'],
    resolve: (quality, { format }): number | null => (format === 'jpeg' || format === 'webp' ? (quality ?? L.quality.default) : null),
  }),
  omitBackground: option(z.boolean('must be a boolean'), {
    doc: 'Transparent background instead of white where the page paints none (png and webp only).',
    default: false,
    example: true,
    formats: ['png', 'webp'],
  }),
  failOnHttpError: option(z.boolean('must be a boolean'), {
    doc: 'Fail the job ("target answered HTTP 404") when the page\'s main document answers 4xx or 5xx, instead of capturing the error page.',
    default: false,
    example: true,
  }),
  blockResources: option(
    z
      .array(
        z.enum(BLOCKABLE_RESOURCE_TYPES, `must be one of ${BLOCKABLE_RESOURCE_TYPES.join(', ')}`),
        'must be an array of resource types',
      )
      .min(1, 'must have at least 1 resource type')
      .refine((types) => new Set(types).size === types.length, 'must not repeat a resource type')
      .meta({ uniqueItems: true }),
    {
      doc: 'Requests of these Playwright resource types are not made (aborted in the browser; the main document is never blocked by type).',
      example: ['image', 'font', 'media'],
      session: true,
      resolve: (types): BlockableResourceType[] | null => (types ? [...types] : null),
    },
  ),
  blockUrls: option(
    z
      .array(
        text()
          .min(1, 'must not be empty')
          .max(L.blockUrlMaxLength, `must be at most ${L.blockUrlMaxLength} characters`)
          .meta({ description: 'A glob over the whole URL: * matches any characters.', example: '*://*.doubleclick.net/*' }),
        'must be an array of URL patterns',
      )
      .min(1, 'must have at least 1 pattern')
      .max(L.blockUrlsMax, `must have at most ${L.blockUrlsMax} patterns`),
    {
      doc: `Requests whose URL matches one of these glob patterns (* = any characters, matched against the whole URL) are not made; at most ${L.blockUrlsMax}.`,
      example: ['*://*.doubleclick.net/*', '*.mp4'],
      session: true,
      resolve: (patterns): string[] | null => (patterns ? [...patterns] : null),
    },
  ),
  mask: option(
    z
      .array(selectorSchema().meta({ description: 'A CSS selector.', example: '.price' }), 'must be an array of CSS selectors')
      .min(1, 'must have at least 1 selector')
      .max(L.maskMax, `must have at most ${L.maskMax} selectors`),
    {
      doc: 'Elements covered with a solid box of maskColor in the image (the page layout does not change).',
      example: ['.price', '#user-name'],
      formats: IMAGE_FORMATS,
      resolve: (selectors): string[] | null => (selectors ? [...selectors] : null),
    },
  ),
  maskColor: option(text().regex(/^#[0-9a-fA-F]{6}$/, 'must be a colour #rrggbb'), {
    doc: 'Colour of the mask boxes, #rrggbb.',
    default: '#ff00ff',
    example: '#000000',
    formats: IMAGE_FORMATS,
    resolve: (color): string => (color ?? '#ff00ff').toLowerCase(),
  }),
  disableAnimations: option(z.boolean('must be a boolean'), {
    doc: 'Finish finite CSS animations and transitions and cancel infinite ones before the capture (as Playwright\'s animations: "disabled").',
    default: false,
    example: true,
  }),
  geolocation: option(
    z.strictObject({
      latitude: z
        .number('must be a number')
        .min(-90, 'must be at least -90')
        .max(90, 'must be at most 90')
        .meta({ description: 'Degrees.' }),
      longitude: z
        .number('must be a number')
        .min(-180, 'must be at least -180')
        .max(180, 'must be at most 180')
        .meta({ description: 'Degrees.' }),
      accuracy: z.number('must be a number').min(0, 'must be at least 0').optional().meta({ description: 'Metres (default 0).' }),
    }),
    {
      doc: 'Position reported by navigator.geolocation, with the permission granted.',
      example: { latitude: 52.52, longitude: 13.405, accuracy: 10 },
      session: true,
      resolve: (geo): Geolocation | null =>
        geo ? { latitude: geo.latitude, longitude: geo.longitude, accuracy: geo.accuracy ?? 0 } : null,
    },
  ),
  // Capture options, second set (CONTRACT.md): the upstream proxy, the thumbnail and the stitched full page.
  proxy: option(text().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be the id of an upstream proxy of EGRESS_PROXIES'), {
    doc: 'Id of an operator-listed upstream proxy (EGRESS_PROXIES) the requests of the capture leave through, after the SSRF guard; an unknown id is refused.',
    example: 'de-residential',
    session: true,
    configured: (id, limits) =>
      id !== undefined && !Object.hasOwn(limits.egressProxies ?? {}, id)
        ? 'is not an upstream proxy this service knows (EGRESS_PROXIES)'
        : null,
  }),
  thumbnail: option(thumbnailSchema, {
    doc: `Also store a downscaled image beside the result, in its format (fit inside by default; cover crops to width × height, contain pads); the job then has thumbnailUrl. Not with format pdf or none.`,
    example: { width: 320, height: 200, fit: 'cover' },
    formats: IMAGE_FORMATS,
    resolve: (thumbnail): ThumbnailOptions | null =>
      thumbnail ? { width: thumbnail.width, height: thumbnail.height ?? null, fit: thumbnail.fit ?? 'inside' } : null,
  }),
  fullPageMaxHeight: option(int(L.fullPageMaxHeight.min, L.fullPageMaxHeight.max), {
    doc: `Tallest full-page image, image px: a page taller than Chromium's single texture (${L.fullPageMaxHeightPx.toLocaleString('en-US')} px) is captured in sections and stitched up to this height, then cut (clipped: true); MAX_IMAGE_PIXELS still caps it (webp: at most 16,383 px).`,
    default: L.fullPageMaxHeight.default,
    example: 40_000,
  }),
  waitUntil: option(z.enum(WAIT_UNTIL, `must be one of ${WAIT_UNTIL.join(', ')}`), {
    doc: 'Navigation milestone to wait for before the rest; networkidle = no request for 500 ms.',
    default: 'load',
    example: 'networkidle',
  }),
  waitForSelector: option(selectorSchema(), {
    doc: 'After waitUntil, wait until an element matching this CSS selector is visible (not within the capture timeout: the job fails with "selector not visible").',
    example: '.chart[data-ready]',
  }),
  hideSelectors: option(
    z
      .array(selectorSchema().meta({ description: 'A CSS selector.', example: '#cookie-banner' }), 'must be an array of CSS selectors')
      .min(1, 'must have at least 1 selector')
      .max(L.hideSelectorsMax, `must have at most ${L.hideSelectorsMax} selectors`),
    {
      doc: 'Elements hidden (visibility: hidden !important) before the capture.',
      example: ['#cookie-banner', '.chat-widget'],
      resolve: (selectors): string[] | null => (selectors ? [...selectors] : null),
    },
  ),
  css: option(text().max(L.codeMaxLength, `must be at most ${L.codeMaxLength} characters`), {
    doc: 'Style sheet added to the page after load.',
    example: 'body { font-family: serif !important; }',
    resolve: (css): string | null => css || null,
  }),
  javascript: option(text().max(L.codeMaxLength, `must be at most ${L.codeMaxLength} characters`), {
    doc: 'Script run in the page after load, as the body of an async function (so `await` works); awaited, bounded by the capture timeout. A throw fails the job with "javascript failed: …".',
    example: "document.querySelector('#promo')?.remove();",
    resolve: (javascript): string | null => javascript || null,
  }),
  darkMode: option(z.boolean('must be a boolean'), {
    doc: 'Emulate prefers-color-scheme: dark.',
    default: false,
    example: true,
    session: true,
  }),
  reducedMotion: option(z.boolean('must be a boolean'), {
    doc: 'Emulate prefers-reduced-motion: reduce.',
    default: false,
    example: true,
    session: true,
  }),
  device: option(
    z.enum(DEVICE_NAMES as [string, ...string[]], 'must be one of Playwright\'s device names, e.g. "iPhone 15" or "Pixel 7"'),
    {
      doc: "Emulate a device (Playwright's device list): its viewport, scale, user agent, mobile and touch. Explicit width, height, scale and userAgent win.",
      example: 'iPhone 15',
      session: true,
    },
  ),
  userAgent: option(
    z
      .string('must be a string')
      .min(1, 'must not be empty')
      .max(L.userAgentMaxLength, `must be at most ${L.userAgentMaxLength} characters`)
      .regex(/^[\x20-\x7e]+$/, 'must be printable ASCII'),
    {
      doc: "User-Agent of every request (default: the browser's).",
      example: 'Mozilla/5.0 (compatible; AcmePreview/1.0)',
      session: true,
      resolve: (userAgent, { device }): string | null => userAgent ?? device?.userAgent ?? null,
    },
  ),
  headers: option(headersSchema, {
    doc: `Extra request headers (at most ${L.headersMax}; values up to ${L.headerValueMaxLength} characters), sent only to the origin of url, never to other origins the page loads from. Host, Cookie, Content-Length, Connection, Transfer-Encoding, Upgrade and Proxy-* are refused.`,
    example: { Authorization: 'Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig', 'X-Preview': '1' },
    session: true,
    resolve: (headers): Record<string, string> | null => (headers && Object.keys(headers).length ? { ...headers } : null),
  }),
  cookies: option(z.array(cookieSchema, 'must be an array of cookies').max(L.cookiesMax, `must have at most ${L.cookiesMax} cookies`), {
    doc: `Cookies set before navigation (at most ${L.cookiesMax}); domain defaults to the host of url.`,
    example: [{ name: 'session', value: 'abc123', httpOnly: true, secure: true, sameSite: 'Lax' }],
    session: true,
    resolve: (cookies): CaptureCookie[] | null => (cookies?.length ? cookies.map((c) => ({ ...c })) : null),
  }),
  timezone: option(
    z
      .string('must be a string')
      .max(64, 'must be at most 64 characters')
      .refine(isTimeZone, 'must be an IANA time zone name, e.g. Europe/Berlin'),
    {
      doc: "IANA time zone of Intl and Date in the page (default: the server's).",
      example: 'America/New_York',
      session: true,
    },
  ),
  locale: option(
    z.string('must be a string').max(35, 'must be at most 35 characters').refine(isLocale, 'must be a BCP 47 language tag, e.g. de-DE'),
    {
      doc: 'navigator.language and Accept-Language.',
      default: DEFAULT_LOCALE,
      example: 'de-DE',
      session: true,
      resolve: (locale): string => (locale ? Intl.getCanonicalLocales(locale)[0] : DEFAULT_LOCALE),
    },
  ),
  blockAds: option(z.boolean('must be a boolean'), {
    doc: 'Do not make requests that match the shipped ad lists (EasyList).',
    default: false,
    example: true,
    session: true,
  }),
  blockTrackers: option(z.boolean('must be a boolean'), {
    doc: 'Do not make requests that match the shipped tracker lists (EasyPrivacy).',
    default: false,
    example: true,
    session: true,
  }),
  blockCookieBanners: option(z.boolean('must be a boolean'), {
    doc: 'Dismiss or hide cookie consent banners (rules shipped with the service, never fetched at capture time).',
    default: false,
    example: true,
    session: true,
  }),
  pdf: option(pdfSchema, {
    doc: 'PDF settings; only with format pdf.',
    example: { paper: 'Letter', landscape: true },
    formats: ['pdf'],
    resolve: (pdf, { format }): PdfOptions | null =>
      format === 'pdf'
        ? {
            paper: pdf?.paper ?? 'A4',
            landscape: pdf?.landscape ?? false,
            printBackground: pdf?.printBackground ?? true,
            ...(pdf?.headerTemplate !== undefined ? { headerTemplate: pdf.headerTemplate } : {}),
            ...(pdf?.footerTemplate !== undefined ? { footerTemplate: pdf.footerTemplate } : {}),
            ...(pdf?.pageRanges !== undefined ? { pageRanges: pdf.pageRanges.replace(/\s+/g, '') } : {}),
            ...(pdf?.margin ? { margin: { ...pdf.margin } } : {}),
            ...(pdf?.scale !== undefined ? { scale: pdf.scale } : {}),
          }
        : null,
  }),
  cache: option(z.boolean('must be a boolean'), {
    doc: 'Reuse a recent identical capture of the same account: the job ends done at once with cached true and is not counted against the quota.',
    default: false,
    example: true,
  }),
  cacheTtl: option(int(L.cacheTtlS.min, L.cacheTtlS.max), {
    doc: 'How old a reused capture may be, in seconds. Only with cache true.',
    default: L.cacheTtlS.default,
    example: 3600,
    onlyWithTrue: 'cache',
    resolvedAs: 'cacheTtlS',
  }),
  extract: option(
    z
      .array(z.enum(EXTRACT_KINDS, `must be one of ${EXTRACT_KINDS.join(', ')}`), 'must be an array')
      .min(1, 'must have at least 1 value')
      .max(EXTRACT_KINDS.length, `must have at most ${EXTRACT_KINDS.length} values`)
      .refine((kinds) => new Set(kinds).size === kinds.length, 'must not repeat a value'),
    {
      doc: 'Also extract the page, from the same page load (after the waits and scripts, before the image): markdown, html, text, links and/or metadata. The job then has extracted (docs/extract.md).',
      example: ['markdown', 'metadata'],
      resolve: (kinds): (typeof EXTRACT_KINDS)[number][] | null => (kinds ? [...kinds] : null),
    },
  ),
  markdownMode: option(z.enum(MARKDOWN_MODES, `must be one of ${MARKDOWN_MODES.join(', ')}`), {
    doc: 'Markdown of extract: readable (the main content as Mozilla Readability finds it, its title as the first heading) or full (the whole body).',
    default: 'readable',
    example: 'full',
  }),
  // Where the result is delivered (CONTRACT.md, "Storage destinations"); src/storage-destinations/ delivers it.
  storage: option(
    z.strictObject({
      destinationId: z
        .string('must be a string')
        .regex(/^dst_[0-9A-Za-z]{24}$/, 'must be a storage destination id (dst_…)')
        .meta({ description: 'A storage destination of the account (POST /v1/storage-destinations).' }),
      path: z
        .string('must be a string')
        .max(STORAGE_PATH_MAX_LENGTH, `must be at most ${STORAGE_PATH_MAX_LENGTH} characters`)
        .superRefine((path, ctx) => {
          const problem = storagePathProblem(path);
          if (problem) ctx.addIssue({ code: 'custom', message: problem });
        })
        .optional()
        .meta({
          description: `Object key template after the destination's prefix (default ${DEFAULT_STORAGE_PATH}): {id}, {ext}, {date} (YYYY-MM-DD UTC), {host}, {accountId}.`,
        }),
      keepCopy: z
        .boolean('must be a boolean')
        .optional()
        .meta({ description: "Keep the service's own copy too (default true); false: the job's url is null." }),
    }),
    {
      doc: "Also upload the result (and extracted files, beside it) to the account's storage destination; the job ends done only once it is stored, and says where in storage (docs/storage-destinations.md). Not with upload or cache.",
      example: { destinationId: 'dst_4fQx9LmZ2pRt7YvB1nKc3sDw', path: '{date}/{id}.{ext}', keepCopy: false },
      notWith: ['upload', 'cache'],
      formats: RESULT_FORMATS,
      resolve: (storage): { destinationId: string; path: string; keepCopy: boolean } | null =>
        storage
          ? { destinationId: storage.destinationId, path: storage.path ?? DEFAULT_STORAGE_PATH, keepCopy: storage.keepCopy ?? true }
          : null,
    },
  ),
  upload: option(
    z.strictObject({
      url: text()
        .max(L.urlMaxLength, `must be at most ${L.urlMaxLength} characters`)
        .refine((url) => /^https?:\/\//i.test(url) && URL.canParse(url), 'must be an absolute http or https URL')
        .meta({ description: 'A presigned PUT URL (e.g. S3); it must pass the SSRF guard.' }),
      headers: headersSchema.optional().meta({ description: 'Headers to send with the PUT (e.g. ones the URL was signed with).' }),
    }),
    {
      doc: 'Also send the image with one PUT to this presigned URL when the capture ends; a non-2xx answer fails the job (docs/storage-destinations.md). Not with storage or cache.',
      example: { url: 'https://my-bucket.s3.amazonaws.com/shot.png?X-Amz-Signature=…', headers: { 'x-amz-acl': 'private' } },
      notWith: ['cache'],
      formats: RESULT_FORMATS,
      resolve: (upload): { url: string; headers: Record<string, string> } | null =>
        upload ? { url: upload.url, headers: { ...(upload.headers ?? {}) } } : null,
    },
  ),
} as const;

type Table = typeof CAPTURE_OPTION_TABLE;

/** A capture option's public name. */
export type CaptureOptionName = keyof Table;

/** Every option's public name, in the table's order. */
export const CAPTURE_OPTION_NAMES = Object.keys(CAPTURE_OPTION_TABLE) as CaptureOptionName[];

/** The session options' public names (entries with `session: true`), in the table's order. */
export type SessionOptionName = { [K in CaptureOptionName]: Table[K] extends { session: true } ? K : never }[CaptureOptionName];

/** The session options' public names, in the table's order. */
export const SESSION_OPTION_NAMES = CAPTURE_OPTION_NAMES.filter(
  (name) => (CAPTURE_OPTION_TABLE[name] as CaptureOptionSpec).session,
) as SessionOptionName[];

/** The entry of `name`, with the common type. */
export function captureOptionSpec(name: CaptureOptionName): CaptureOptionSpec {
  return CAPTURE_OPTION_TABLE[name] as CaptureOptionSpec;
}

/**
 * The public schema of every option with its doc, default and example as JSON Schema annotations:
 * the REST validation and OpenAPI properties (`CaptureOption` decorators, `MatchesSchema`), the MCP
 * arguments and {@link CaptureOptionsInput} come from it.
 */
export const CAPTURE_OPTION_FIELDS = Object.fromEntries(
  CAPTURE_OPTION_NAMES.map((name) => {
    const spec = captureOptionSpec(name);
    return [
      name,
      spec.schema.meta({ description: spec.doc, ...(spec.default !== undefined ? { default: spec.default } : {}), example: spec.example }),
    ];
  }),
) as { readonly [K in CaptureOptionName]: Table[K]['schema'] };

/** The options as a customer sends them (REST body, upload form fields, MCP arguments, batch items), all optional. */
export type CaptureOptionsInput = { [K in CaptureOptionName]?: z.output<Table[K]['schema']> };

/** The session options as a customer sends them (run bodies). */
export type SessionOptionsInput = Pick<CaptureOptionsInput, SessionOptionName>;

/**
 * JSON Schema (2020-12, OpenAPI 3.1 and MCP `inputSchema` alike) of one option, with its description,
 * default and example.
 */
export function captureOptionJsonSchema(name: CaptureOptionName): Record<string, unknown> {
  const { $schema: _ignored, ...schema } = z.toJSONSchema(CAPTURE_OPTION_FIELDS[name], {
    target: 'draft-2020-12',
    unrepresentable: 'any',
  }) as Record<string, unknown>;
  return schema;
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

/** An entry's resolved value: what its `resolve` returns, else its output type (null when it has no default). */
type ResolvedValue<E> = E extends { resolve: (...args: never[]) => infer R }
  ? R
  : E extends { schema: infer S extends z.ZodType; default: unknown }
    ? z.output<S>
    : E extends { schema: infer S extends z.ZodType }
      ? z.output<S> | null
      : never;

/** An entry's resolved name: `resolvedAs`, else its public name. */
type ResolvedName<K extends string, E> = E extends { resolvedAs: infer A extends string } ? A : K;

/** What a `device` implies beyond the options of the table (Playwright's descriptor). */
export interface DeviceTraits {
  /** Mobile meta-viewport. */
  isMobile: boolean;
  /** Touch events. */
  hasTouch: boolean;
}

/**
 * The options of one capture with every default applied, derived from the table: each option under
 * its resolved name (`delay` → `delayMs` ms, `cacheTtl` → `cacheTtlS` s) plus the device's traits.
 * Sizes in CSS px.
 */
export type CaptureOptions = { -readonly [K in CaptureOptionName as ResolvedName<K, Table[K]>]: ResolvedValue<Table[K]> } & DeviceTraits;

/**
 * The options of a browser session, shared by captures and browser session runs (CONTRACT.md,
 * "Browser session runs": the session options): the session options resolved, plus the device's traits.
 */
export type SessionOptions = { -readonly [K in SessionOptionName as ResolvedName<K, Table[K]>]: ResolvedValue<Table[K]> } & DeviceTraits;

/**
 * The combinations CONTRACT.md ("Capture options") refuses, as field errors (each naming the field
 * that may not be there, prefixed with `prefix`, e.g. `items[2].`); empty when the input is fine.
 * Derived from the entries' `notWith`, `formats`, `onlyWithTrue`, `valueNeeds` and `configured` (a value
 * the configuration refuses: an unknown `proxy` id), checked in that order, then
 * their `imagePixels` against `limits.maxImagePixels` (CONTRACT.md, "Capture options, second set":
 * image size cap), naming the option, or when it is not given the first given of its `imagePixelsFrom`.
 */
export function captureOptionConflicts(input: CaptureOptionsInput, limits: ConfiguredOptionLimits, prefix = ''): FieldError[] {
  const given = input as Record<string, unknown>;
  const isSet = (name: string) => given[name] != null;
  const isOn = (name: string) => isSet(name) && given[name] !== false;
  const format = input.format ?? DEFAULT_FORMAT;
  const errors: FieldError[] = [];
  const refuse = (field: string, message: string) => errors.push({ field: prefix + field, message });
  const specs = CAPTURE_OPTION_NAMES.map((name) => [name, captureOptionSpec(name)] as const).filter(([name]) => isSet(name));
  for (const [name, spec] of specs) for (const other of spec.notWith ?? []) if (isOn(other)) refuse(name, `is not allowed with ${other}`);
  for (const [name, spec] of specs) {
    if (!spec.formats || spec.formats.includes(format)) continue;
    refuse(name, format === 'pdf' ? 'is not allowed with format pdf' : `is only allowed with format ${spec.formats.join(' or ')}`);
  }
  for (const [name, spec] of specs)
    if (spec.onlyWithTrue && given[spec.onlyWithTrue] !== true) refuse(name, `is only allowed with ${spec.onlyWithTrue} true`);
  for (const [name, spec] of specs) {
    const needed = spec.valueNeeds?.[String(given[name])];
    if (needed && !isSet(needed)) refuse(name, `${String(given[name])} is only allowed with ${needed}`);
  }
  for (const [name, spec] of specs) {
    const problem = spec.configured?.(given[name], limits);
    if (problem) refuse(name, problem);
  }
  const size = resolveNamed(input, ['width', 'height', 'scale']) as unknown as ImageSize;
  for (const name of CAPTURE_OPTION_NAMES) {
    const spec = captureOptionSpec(name);
    const pixels = spec.imagePixels?.(given[name], size) ?? null;
    if (pixels === null || pixels <= limits.maxImagePixels) continue;
    const field = [name, ...(spec.imagePixelsFrom ?? [])].find(isSet) ?? name;
    refuse(field, imageTooLargeMessage(pixels, limits.maxImagePixels));
  }
  return errors;
}

/** The validation message of an image over the cap (pixels are device pixels). */
function imageTooLargeMessage(pixels: number, maxImagePixels: number): string {
  const n = (x: number) => x.toLocaleString('en-US');
  return `asks for an image of ${n(pixels)} pixels (width × height × scale²), more than the ${n(maxImagePixels)} allowed (MAX_IMAGE_PIXELS)`;
}

const DEFAULT_FORMAT = CAPTURE_OPTION_TABLE.format.default;

/**
 * Applies the defaults to validated input: each option's `resolve`, else its value, else its default,
 * else null; a `device` supplies viewport, scale, user agent, mobile and touch, and explicit `width`,
 * `height`, `scale` and `userAgent` win over it (CONTRACT.md). Call {@link captureOptionConflicts} first.
 */
export function resolveCaptureOptions(input: CaptureOptionsInput): CaptureOptions {
  return resolveNamed(input, CAPTURE_OPTION_NAMES) as unknown as CaptureOptions;
}

/** The session options of `input` resolved as a capture's (same defaults; a `device` fills viewport, scale and user agent). */
export function resolveSessionOptions(input: SessionOptionsInput): SessionOptions {
  return resolveNamed(input, SESSION_OPTION_NAMES) as unknown as SessionOptions;
}

function resolveNamed(input: CaptureOptionsInput, names: readonly CaptureOptionName[]): Record<string, unknown> {
  const device = input.device ? devices[input.device] : undefined;
  const context: ResolveContext = { device, format: input.format ?? DEFAULT_FORMAT };
  const resolved: Record<string, unknown> = {};
  for (const name of names) {
    const spec = captureOptionSpec(name);
    const value = input[name];
    resolved[spec.resolvedAs ?? name] = spec.resolve ? spec.resolve(value, context) : (value ?? spec.default ?? null);
  }
  resolved.isMobile = device?.isMobile ?? false;
  resolved.hasTouch = device?.hasTouch ?? false;
  return resolved;
}

/** Every default of {@link CaptureOptions}. */
export const DEFAULT_CAPTURE_OPTIONS: Readonly<CaptureOptions> = Object.freeze(resolveCaptureOptions({}));

/** The options as given, public names only, `undefined`s dropped: the job's `options` echo (CONTRACT.md). */
export function givenCaptureOptions(input: CaptureOptionsInput): CaptureOptionsInput {
  const given: Record<string, unknown> = {};
  for (const name of CAPTURE_OPTION_NAMES) {
    if (input[name] != null) given[name] = input[name];
  }
  return given as CaptureOptionsInput;
}

/**
 * The capture cache key (CONTRACT.md, "Capture options": cache): hex SHA-256 of the target (a URL
 * WHATWG-serialised, or `upload:<sha256>`) and the resolved options that shape the result (every
 * option but `cache` and `cacheTtl`), in canonical JSON. The account is the other half of the key.
 */
export function captureCacheKey(target: string, options: CaptureOptions): string {
  let canonicalTarget = target;
  try {
    if (!target.startsWith('upload:')) canonicalTarget = new URL(target).href;
  } catch {
    /* validated earlier; keep as is */
  }
  const { cache: _cache, cacheTtlS: _ttl, ...shaping } = options;
  return createHash('sha256')
    .update(canonicalJson({ target: canonicalTarget, options: shaping }))
    .digest('hex');
}

/** JSON with object keys sorted at every level (arrays keep their order). */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * The longest one capture with `options` may take, ms (docs/capture-engine.md#time-budget): navigation
 * (`CAPTURE_TIMEOUT_MS`), then one `CAPTURE_TIMEOUT_MS` for each of `waitForSelector`, `javascript`
 * and `selector` that is set, `delay`, and the screenshot or PDF (`CAPTURE_TIMEOUT_MS` again).
 * Without `options`, the budget of the slowest options allowed (for shutdown waits and the stuck-job sweep).
 */
export function captureBudgetMs(
  captureTimeoutMs: number,
  options?: Pick<CaptureOptions, 'delayMs' | 'waitForSelector' | 'javascript' | 'selector'>,
): number {
  const waits = options
    ? [options.waitForSelector, options.javascript, options.selector].filter((o) => o !== null && o !== undefined).length
    : 3;
  return captureTimeoutMs * (2 + waits) + (options?.delayMs ?? L.delayMs.max);
}
