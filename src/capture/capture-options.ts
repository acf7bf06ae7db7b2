import { createHash } from 'node:crypto';
import { devices } from 'playwright';
import { z } from 'zod';
import type { FieldError } from '../common/api-error';
import { FULL_PAGE_MAX_HEIGHT_PX, RESULT_FORMATS, ResultFormat } from '../results/result-formats';

/**
 * The capture options: one value type, its limits and defaults, read by the REST DTOs, the MCP tool
 * schema, the job entity mapping, the capture engine and the event payloads (issue 10, issue 11;
 * CONTRACT.md, "Capture options").
 *
 * Adding an option: add it to {@link CaptureOptions} (resolved value, internal name and unit), to
 * {@link CAPTURE_OPTION_FIELDS} (its public schema with description and example, from which the
 * validation, the OpenAPI property, the MCP argument and {@link CaptureOptionsInput} are derived), to
 * {@link resolveCaptureOptions} (and {@link captureOptionConflicts} when it excludes another), a
 * `@CaptureOption.x()` line in the two screenshot DTOs, and its use in the capture engine. The job
 * stores the resolved options in its `options` jsonb column, so no migration is needed.
 *
 * The options a browser session needs (viewport, scale, device, identity, headers, cookies, media,
 * blockers) form {@link SessionOptions}, which browser session runs reuse (CONTRACT.md, "Browser
 * session runs"); `session-options.ts` applies them to a context.
 */

/** Limits of the capture options (CONTRACT.md, "Screenshot jobs" and "Capture options"). Sizes in CSS px, times in ms. */
export const CAPTURE_LIMITS = {
  urlMaxLength: 2048,
  width: { min: 100, max: 3840, default: 1280 },
  height: { min: 100, max: 4320, default: 800 },
  delayMs: { min: 0, max: 10_000, default: 0 },
  /** Tallest full-page capture, px (Chromium's largest texture); taller pages are clipped to it (README, "Full page"). */
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

const selectorSchema = (description: string, example: string) =>
  text().min(1, 'must not be empty').max(L.selectorMaxLength, `must be at most ${L.selectorMaxLength} characters`).meta({ description, example });

const int = (min: number, max: number) =>
  z.int('must be an integer').min(min, `must be at least ${min}`).max(max, `must be at most ${max}`);

const clipSchema = z
  .strictObject({
    x: int(0, L.clipMaxOffset).meta({ description: 'Left edge, CSS px from the page origin.' }),
    y: int(0, L.clipMaxOffset).meta({ description: 'Top edge, CSS px from the page origin.' }),
    width: int(1, L.clipMaxSize).meta({ description: 'CSS px.' }),
    height: int(1, L.clipMaxSize).meta({ description: 'CSS px.' }),
  })
  .meta({
    description: `Capture this rectangle of the page (CSS px; the image is width × scale by height × scale px). Not with selector or fullPage.`,
    example: { x: 0, y: 0, width: 600, height: 400 },
  });

const cookieSchema = z.strictObject({
  name: z.string().min(1, 'must not be empty').max(256, 'must be at most 256 characters').regex(TOKEN, 'must be a token (RFC 9110)'),
  value: z
    .string()
    .max(L.cookieValueMaxLength, `must be at most ${L.cookieValueMaxLength} characters`)
    .regex(/^[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]*$/, 'must be printable ASCII without spaces, quotes, commas, semicolons or backslashes (RFC 6265)'),
  domain: z
    .string()
    .min(1, 'must not be empty')
    .max(253, 'must be at most 253 characters')
    .regex(/^\.?[A-Za-z0-9.-]+$/, 'must be a host name, optionally with a leading dot')
    .optional()
    .meta({ description: 'Default: the host of url (a host-only cookie).' }),
  path: z.string().startsWith('/', 'must start with /').max(1024, 'must be at most 1024 characters').regex(/^[\x21-\x3a\x3c-\x7e]*$/, 'must not contain spaces, controls or semicolons').optional(),
  secure: z.boolean('must be a boolean').optional(),
  httpOnly: z.boolean('must be a boolean').optional(),
  sameSite: z.enum(['Strict', 'Lax', 'None'], 'must be one of Strict, Lax, None').optional(),
});

const headersSchema = z
  .record(
    z
      .string()
      .regex(TOKEN, 'must be a header name (an RFC 9110 token)')
      .refine((name) => !FORBIDDEN_HEADER.test(name), 'may not be set: Host, Cookie, Content-Length, Connection, Transfer-Encoding, Upgrade and Proxy-* are refused'),
    z
      .string('must be a string')
      .max(L.headerValueMaxLength, `must be at most ${L.headerValueMaxLength} characters`)
      .regex(/^[\t\x20-\x7e\x80-\xff]*$/, 'must not contain control characters'),
  )
  .refine((h) => Object.keys(h).length <= L.headersMax, `must have at most ${L.headersMax} entries`)
  .meta({
    maxProperties: L.headersMax,
    description: `Extra request headers (at most ${L.headersMax}; values up to ${L.headerValueMaxLength} characters), sent only to the origin of url, never to other origins the page loads from. Host, Cookie, Content-Length, Connection, Transfer-Encoding, Upgrade and Proxy-* are refused.`,
    example: { Authorization: 'Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig', 'X-Preview': '1' },
  });

const pdfSchema = z
  .strictObject({
    paper: z.enum(PDF_PAPERS, `must be one of ${PDF_PAPERS.join(', ')}`).optional().meta({ description: 'Paper size (default A4).' }),
    landscape: z.boolean('must be a boolean').optional().meta({ description: 'Landscape orientation (default false).' }),
    printBackground: z.boolean('must be a boolean').optional().meta({ description: 'Print background colours and images (default true).' }),
  })
  .meta({ description: 'PDF settings; only with format pdf.', example: { paper: 'Letter', landscape: true } });

/**
 * The public schema of every option, keyed by its public name (CONTRACT.md's table): the single
 * source of the REST validation and OpenAPI properties (`CaptureOption` decorators, `MatchesSchema`),
 * of the MCP `take_screenshot` arguments and of {@link CaptureOptionsInput}.
 */
export const CAPTURE_OPTION_FIELDS = {
  width: int(L.width.min, L.width.max).meta({ description: 'Viewport width in CSS px.', default: L.width.default, example: 1440 }),
  height: int(L.height.min, L.height.max).meta({
    description: 'Viewport height in CSS px (with fullPage the image is as tall as the page).',
    default: L.height.default,
    example: 900,
  }),
  fullPage: z.boolean('must be a boolean').meta({
    description: `Capture the whole scrollable page instead of the viewport only (height capped at ${L.fullPageMaxHeightPx.toLocaleString('en-US')} px; the job then says \`clipped\`). Not with selector or clip.`,
    default: false,
    example: true,
  }),
  format: z.enum(RESULT_FORMATS, `must be one of ${RESULT_FORMATS.join(', ')}`).meta({
    description: 'Result format: an image, or pdf (an A4 PDF of the page unless pdf.paper says otherwise; not with selector, clip, scale or quality).',
    default: 'png',
    example: 'webp',
  }),
  delay: int(L.delayMs.min, L.delayMs.max).meta({
    description: 'Milliseconds to wait after the page has loaded (and after css and javascript) before capturing.',
    default: L.delayMs.default,
    example: 500,
  }),
  selector: selectorSchema(
    'Capture the box of the first element matching this CSS selector (not found within the capture timeout: the job fails with "selector not found"). Not with fullPage or clip.',
    '#pricing-table',
  ),
  clip: clipSchema,
  scale: z
    .number('must be a number')
    .min(L.scale.min, `must be at least ${L.scale.min}`)
    .max(L.scale.max, `must be at most ${L.scale.max}`)
    .meta({ description: 'Device scale factor: the image is width × scale by height × scale px.', default: L.scale.default, example: 2 }),
  quality: int(L.quality.min, L.quality.max).meta({
    description: `Compression quality of jpeg and webp (not with png or pdf).`,
    default: L.quality.default,
    example: 70,
  }),
  waitUntil: z.enum(WAIT_UNTIL, `must be one of ${WAIT_UNTIL.join(', ')}`).meta({
    description: 'Navigation milestone to wait for before the rest; networkidle = no request for 500 ms.',
    default: 'load',
    example: 'networkidle',
  }),
  waitForSelector: selectorSchema(
    'After waitUntil, wait until an element matching this CSS selector is visible (not within the capture timeout: the job fails with "selector not visible").',
    '.chart[data-ready]',
  ),
  hideSelectors: z
    .array(selectorSchema('A CSS selector.', '#cookie-banner'), 'must be an array of CSS selectors')
    .min(1, 'must have at least 1 selector')
    .max(L.hideSelectorsMax, `must have at most ${L.hideSelectorsMax} selectors`)
    .meta({ description: 'Elements hidden (visibility: hidden !important) before the capture.', example: ['#cookie-banner', '.chat-widget'] }),
  css: text()
    .max(L.codeMaxLength, `must be at most ${L.codeMaxLength} characters`)
    .meta({ description: 'Style sheet added to the page after load.', example: 'body { font-family: serif !important; }' }),
  javascript: text()
    .max(L.codeMaxLength, `must be at most ${L.codeMaxLength} characters`)
    .meta({
      description:
        'Script run in the page after load, as the body of an async function (so `await` works); awaited, bounded by the capture timeout. A throw fails the job with "javascript failed: …".',
      example: "document.querySelector('#promo')?.remove();",
    }),
  darkMode: z.boolean('must be a boolean').meta({ description: 'Emulate prefers-color-scheme: dark.', default: false, example: true }),
  reducedMotion: z.boolean('must be a boolean').meta({ description: 'Emulate prefers-reduced-motion: reduce.', default: false, example: true }),
  device: z.enum(DEVICE_NAMES as [string, ...string[]], 'must be one of Playwright\'s device names, e.g. "iPhone 15" or "Pixel 7"').meta({
    description: "Emulate a device (Playwright's device list): its viewport, scale, user agent, mobile and touch. Explicit width, height, scale and userAgent win.",
    example: 'iPhone 15',
  }),
  userAgent: z
    .string('must be a string')
    .min(1, 'must not be empty')
    .max(L.userAgentMaxLength, `must be at most ${L.userAgentMaxLength} characters`)
    .regex(/^[\x20-\x7e]+$/, 'must be printable ASCII')
    .meta({ description: 'User-Agent of every request (default: the browser\'s).', example: 'Mozilla/5.0 (compatible; AcmePreview/1.0)' }),
  headers: headersSchema,
  cookies: z
    .array(cookieSchema, 'must be an array of cookies')
    .max(L.cookiesMax, `must have at most ${L.cookiesMax} cookies`)
    .meta({
      description: `Cookies set before navigation (at most ${L.cookiesMax}); domain defaults to the host of url.`,
      example: [{ name: 'session', value: 'abc123', httpOnly: true, secure: true, sameSite: 'Lax' }],
    }),
  timezone: z
    .string('must be a string')
    .max(64, 'must be at most 64 characters')
    .refine(isTimeZone, 'must be an IANA time zone name, e.g. Europe/Berlin')
    .meta({ description: "IANA time zone of Intl and Date in the page (default: the server's).", example: 'America/New_York' }),
  locale: z
    .string('must be a string')
    .max(35, 'must be at most 35 characters')
    .refine(isLocale, 'must be a BCP 47 language tag, e.g. de-DE')
    .meta({ description: 'navigator.language and Accept-Language.', default: DEFAULT_LOCALE, example: 'de-DE' }),
  blockAds: z.boolean('must be a boolean').meta({ description: 'Do not make requests that match the shipped ad lists (EasyList).', default: false, example: true }),
  blockTrackers: z
    .boolean('must be a boolean')
    .meta({ description: 'Do not make requests that match the shipped tracker lists (EasyPrivacy).', default: false, example: true }),
  blockCookieBanners: z.boolean('must be a boolean').meta({
    description: 'Dismiss or hide cookie consent banners (rules shipped with the service, never fetched at capture time).',
    default: false,
    example: true,
  }),
  pdf: pdfSchema,
  cache: z.boolean('must be a boolean').meta({
    description: 'Reuse a recent identical capture of the same account: the job ends done at once with cached true and is not counted against the quota.',
    default: false,
    example: true,
  }),
  cacheTtl: int(L.cacheTtlS.min, L.cacheTtlS.max).meta({
    description: 'How old a reused capture may be, in seconds. Only with cache true.',
    default: L.cacheTtlS.default,
    example: 3600,
  }),
} as const;

/** The options as a customer sends them (REST body, upload form fields, MCP arguments, batch items), all optional. */
export type CaptureOptionsInput = { [K in keyof typeof CAPTURE_OPTION_FIELDS]?: z.output<(typeof CAPTURE_OPTION_FIELDS)[K]> };

/** A capture option's public name. */
export type CaptureOptionName = keyof typeof CAPTURE_OPTION_FIELDS;

/**
 * JSON Schema (2020-12, OpenAPI 3.1 and MCP `inputSchema` alike) of one option, with its description,
 * default and example.
 */
export function captureOptionJsonSchema(name: CaptureOptionName): Record<string, unknown> {
  const { $schema: _ignored, ...schema } = z.toJSONSchema(CAPTURE_OPTION_FIELDS[name], { target: 'draft-2020-12', unrepresentable: 'any' }) as Record<string, unknown>;
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
}

/**
 * The options of a browser session, shared by captures and browser session runs (CONTRACT.md,
 * "Browser session runs": the session options). Sizes in CSS px.
 */
export interface SessionOptions {
  /** Viewport width. */
  width: number;
  /** Viewport height (with `fullPage` the image is as tall as the page, up to the cap). */
  height: number;
  /** Device scale factor. */
  scale: number;
  /** Playwright device name, or null. */
  device: string | null;
  /** Mobile meta-viewport and touch events (from `device`). */
  isMobile: boolean;
  hasTouch: boolean;
  /** `User-Agent` (explicit, or the device's), or null for the browser's. */
  userAgent: string | null;
  /** Extra headers for the origin of the target URL only. */
  headers: Record<string, string> | null;
  cookies: CaptureCookie[] | null;
  locale: string;
  /** IANA zone, or null for the server's. */
  timezone: string | null;
  darkMode: boolean;
  reducedMotion: boolean;
  blockAds: boolean;
  blockTrackers: boolean;
  blockCookieBanners: boolean;
}

/** The options of one capture with every default applied. Sizes in CSS px, times in ms. */
export interface CaptureOptions extends SessionOptions {
  fullPage: boolean;
  format: ResultFormat;
  /** Wait after load (and css, javascript), ms. */
  delayMs: number;
  selector: string | null;
  clip: ClipRect | null;
  /** 1-100 for jpeg and webp; null for png and pdf. */
  quality: number | null;
  waitUntil: WaitUntil;
  waitForSelector: string | null;
  hideSelectors: string[] | null;
  css: string | null;
  javascript: string | null;
  /** Set when `format` is `pdf`. */
  pdf: PdfOptions | null;
  cache: boolean;
  /** Seconds. */
  cacheTtlS: number;
}

/** Every default of {@link CaptureOptions}. */
export const DEFAULT_CAPTURE_OPTIONS: Readonly<CaptureOptions> = Object.freeze({
  width: L.width.default,
  height: L.height.default,
  scale: L.scale.default,
  device: null,
  isMobile: false,
  hasTouch: false,
  userAgent: null,
  headers: null,
  cookies: null,
  locale: DEFAULT_LOCALE,
  timezone: null,
  darkMode: false,
  reducedMotion: false,
  blockAds: false,
  blockTrackers: false,
  blockCookieBanners: false,
  fullPage: false,
  format: 'png',
  delayMs: L.delayMs.default,
  selector: null,
  clip: null,
  quality: null,
  waitUntil: 'load',
  waitForSelector: null,
  hideSelectors: null,
  css: null,
  javascript: null,
  pdf: null,
  cache: false,
  cacheTtlS: L.cacheTtlS.default,
});

/**
 * The combinations CONTRACT.md ("Capture options") refuses, as field errors (each naming the field
 * that may not be there, prefixed with `prefix`, e.g. `items[2].`); empty when the input is fine.
 */
export function captureOptionConflicts(input: CaptureOptionsInput, prefix = ''): FieldError[] {
  const errors: FieldError[] = [];
  const refuse = (field: string, message: string) => errors.push({ field: prefix + field, message });
  const format = input.format ?? DEFAULT_CAPTURE_OPTIONS.format;
  if (input.selector != null && input.fullPage) refuse('selector', 'is not allowed with fullPage');
  if (input.clip != null && input.fullPage) refuse('clip', 'is not allowed with fullPage');
  if (input.clip != null && input.selector != null) refuse('clip', 'is not allowed with selector');
  if (format === 'pdf') {
    for (const field of ['selector', 'clip', 'scale', 'quality'] as const) {
      if (input[field] != null) refuse(field, 'is not allowed with format pdf');
    }
  } else {
    if (input.quality != null && format === 'png') refuse('quality', 'is only allowed with format jpeg or webp');
    if (input.pdf != null) refuse('pdf', 'is only allowed with format pdf');
  }
  if (input.cacheTtl != null && input.cache !== true) refuse('cacheTtl', 'is only allowed with cache true');
  return errors;
}

/**
 * Applies the defaults to validated input: a `device` supplies viewport, scale, user agent, mobile and
 * touch, and explicit `width`, `height`, `scale` and `userAgent` win over it (CONTRACT.md). Call
 * {@link captureOptionConflicts} first.
 */
export function resolveCaptureOptions(input: CaptureOptionsInput): CaptureOptions {
  const d = DEFAULT_CAPTURE_OPTIONS;
  const device = input.device ? devices[input.device] : undefined;
  const format = input.format ?? d.format;
  return {
    width: input.width ?? device?.viewport.width ?? d.width,
    height: input.height ?? device?.viewport.height ?? d.height,
    scale: input.scale ?? device?.deviceScaleFactor ?? d.scale,
    device: input.device ?? null,
    isMobile: device?.isMobile ?? false,
    hasTouch: device?.hasTouch ?? false,
    userAgent: input.userAgent ?? device?.userAgent ?? null,
    headers: input.headers && Object.keys(input.headers).length ? { ...input.headers } : null,
    cookies: input.cookies?.length ? input.cookies.map((c) => ({ ...c })) : null,
    locale: input.locale ? Intl.getCanonicalLocales(input.locale)[0] : d.locale,
    timezone: input.timezone ?? null,
    darkMode: input.darkMode ?? d.darkMode,
    reducedMotion: input.reducedMotion ?? d.reducedMotion,
    blockAds: input.blockAds ?? d.blockAds,
    blockTrackers: input.blockTrackers ?? d.blockTrackers,
    blockCookieBanners: input.blockCookieBanners ?? d.blockCookieBanners,
    fullPage: input.fullPage ?? d.fullPage,
    format,
    delayMs: input.delay ?? d.delayMs,
    selector: input.selector ?? null,
    clip: input.clip ? { ...input.clip } : null,
    quality: format === 'jpeg' || format === 'webp' ? (input.quality ?? L.quality.default) : null,
    waitUntil: input.waitUntil ?? d.waitUntil,
    waitForSelector: input.waitForSelector ?? null,
    hideSelectors: input.hideSelectors ? [...input.hideSelectors] : null,
    css: input.css || null,
    javascript: input.javascript || null,
    pdf: format === 'pdf' ? { paper: input.pdf?.paper ?? 'A4', landscape: input.pdf?.landscape ?? false, printBackground: input.pdf?.printBackground ?? true } : null,
    cache: input.cache ?? d.cache,
    cacheTtlS: input.cacheTtl ?? d.cacheTtlS,
  };
}

/** The options as given, public names only, `undefined`s dropped: the job's `options` echo (CONTRACT.md). */
export function givenCaptureOptions(input: CaptureOptionsInput): CaptureOptionsInput {
  const given: Record<string, unknown> = {};
  for (const name of Object.keys(CAPTURE_OPTION_FIELDS) as CaptureOptionName[]) {
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
  return createHash('sha256').update(canonicalJson({ target: canonicalTarget, options: shaping })).digest('hex');
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
 * The longest one capture with `options` may take, ms (README, "Time budget"): navigation
 * (`CAPTURE_TIMEOUT_MS`), then one `CAPTURE_TIMEOUT_MS` for each of `waitForSelector`, `javascript`
 * and `selector` that is set, `delay`, and the screenshot or PDF (`CAPTURE_TIMEOUT_MS` again).
 * Without `options`, the budget of the slowest options allowed (for shutdown waits and the stuck-job sweep).
 */
export function captureBudgetMs(
  captureTimeoutMs: number,
  options?: Pick<CaptureOptions, 'delayMs' | 'waitForSelector' | 'javascript' | 'selector'>,
): number {
  const waits = options ? [options.waitForSelector, options.javascript, options.selector].filter((o) => o !== null && o !== undefined).length : 3;
  return captureTimeoutMs * (2 + waits) + (options?.delayMs ?? L.delayMs.max);
}
