import type { DeviceDescriptor } from './devices';
import { z } from 'zod';
import { EXTRACT_KINDS, MARKDOWN_MODES } from '../results/extracted';
import { ANIMATION_FORMATS, IMAGE_FORMATS, isAnimationFormat, JOB_FORMATS, JobFormat, RESULT_FORMATS } from '../results/result-formats';
import { DEFAULT_STORAGE_PATH, STORAGE_PATH_MAX_LENGTH, storagePathProblem } from '../results/storage-path';
import {
  AnimationOptions,
  animationSchema,
  BLOCKABLE_RESOURCE_TYPES,
  BlockableResourceType,
  CAPTURE_LIMITS,
  CaptureCookie,
  ClipRect,
  clipSchema,
  cookieSchema,
  DEFAULT_LOCALE,
  DEVICE_NAMES,
  Geolocation,
  headersSchema,
  int,
  isLocale,
  isTimeZone,
  PdfOptions,
  pdfSchema,
  selectorSchema,
  text,
  ThumbnailOptions,
  thumbnailSchema,
  WAIT_UNTIL,
} from './capture-options-schemas';

/**
 * The options table (CONTRACT.md, "Capture options"): one entry per option with its type and limits,
 * default, one-line doc, example, whether browser session runs take it too, its conflicts with other
 * options and how it resolves. Everything else is derived from it (`capture-options-derived.ts`,
 * `capture-options-resolution.ts`; docs/capture-options.md says how to add an option).
 */

const L = CAPTURE_LIMITS;

/** What an option's resolution may look at besides its own value: the emulated device and the result format. */
export interface ResolveContext {
  /** Playwright's descriptor of `device`, when one is given. */
  device: DeviceDescriptor | undefined;
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
  /** Allowed only when this option is given: "is only allowed with X". */
  onlyWith?: string;
  /** Not taken by `POST /v1/screenshot/upload` (an uploaded document has no site to be logged in to). */
  notForUploads?: true;
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

/** The formats of a still page: every job format but the animations (CONTRACT.md, "Animated captures"). */
const STILL_FORMATS = JOB_FORMATS.filter((f) => !isAnimationFormat(f));

const A = L.animation;

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
    formats: STILL_FORMATS,
  }),
  format: option(z.enum(JOB_FORMATS, `must be one of ${JOB_FORMATS.join(', ')}`), {
    doc: 'Result format: an image, or pdf (an A4 PDF of the page unless pdf.paper says otherwise; not with selector, clip, scale or quality), or mp4, webm or gif (a video of the page scrolling, see animation), or none (no image, only with extract).',
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
    doc: `Also store a downscaled image beside the result, in its format (fit inside by default; cover crops to width × height, contain pads); the job then has thumbnailUrl. With mp4, webm or gif it is the first frame, as PNG. Not with format pdf or none.`,
    example: { width: 320, height: 200, fit: 'cover' },
    formats: [...IMAGE_FORMATS, ...ANIMATION_FORMATS],
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
  // Animated captures (CONTRACT.md): the scroll of format mp4, webm or gif; src/capture/animated-capture.ts records it.
  animation: option(animationSchema, {
    doc: `How an mp4, webm or gif capture scrolls the page: scrollTo ("bottom" or y px), durationMs ${A.durationMs.min.toLocaleString('en-US')}–${A.durationMs.max.toLocaleString('en-US')} (${A.durationMs.default.toLocaleString('en-US')}), fps ${A.fps.min}–${A.fps.max} (${A.fps.default}; gif ${A.fps.gifDefault}), easing, startDelayMs, pauseAtEndMs, scrollBack. Only with format mp4, webm or gif (docs/animated-captures.md).`,
    example: {
      scrollTo: 'bottom',
      durationMs: 4000,
      fps: 25,
      easing: 'ease-in-out',
      startDelayMs: 500,
      pauseAtEndMs: 1000,
      scrollBack: false,
    },
    formats: ANIMATION_FORMATS,
    resolve: (animation, { format }): AnimationOptions | null =>
      isAnimationFormat(format)
        ? {
            scrollTo: animation?.scrollTo ?? 'bottom',
            durationMs: animation?.durationMs ?? A.durationMs.default,
            fps: animation?.fps ?? (format === 'gif' ? A.fps.gifDefault : A.fps.default),
            easing: animation?.easing ?? 'ease-in-out',
            startDelayMs: animation?.startDelayMs ?? A.startDelayMs.default,
            pauseAtEndMs: animation?.pauseAtEndMs ?? A.pauseAtEndMs.default,
            scrollBack: animation?.scrollBack ?? false,
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
      doc: 'Also extract the page, from the same page load (after the waits and scripts, before the image): markdown, html, text, links and/or metadata. The job then has extracted (docs/extract.md). Not with mp4, webm or gif.',
      example: ['markdown', 'metadata'],
      formats: STILL_FORMATS,
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
  // Logged-in captures (CONTRACT.md, "Browser profiles"); src/profiles/ checks the profile at submission and loads its state.
  profile: option(text().regex(/^prf_[0-9A-Za-z]{24}$/, 'must be a profile id (prf_…)'), {
    doc: "A browser profile of the account (POST /v1/profiles): the fresh context starts with its cookies and local storage. The URL's host must be within the profile's allowedDomains (400 PROFILE_DOMAIN_NOT_ALLOWED). Not for uploads.",
    example: 'prf_4fQx9LmZ2pRt7YvB1nKc3sDw',
    session: true,
    notForUploads: true,
  }),
  profileCheck: option(
    z.strictObject({
      selector: selectorSchema().meta({
        description: 'A CSS selector of an element present only when logged in.',
        example: '#account-menu',
      }),
    }),
    {
      doc: 'After the page loaded: when no element matches selector within the capture timeout, the job fails with "profile expired: <selector> not found" and profile.expired is sent (once until the profile changes). Only with profile.',
      example: { selector: '#account-menu' },
      onlyWith: 'profile',
      notForUploads: true,
      resolve: (check): { selector: string } | null => (check ? { selector: check.selector } : null),
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

/** The options `POST /v1/screenshot/upload` takes: every option but those marked `notForUploads`. */
export const UPLOAD_OPTION_NAMES = CAPTURE_OPTION_NAMES.filter((name) => !(CAPTURE_OPTION_TABLE[name] as CaptureOptionSpec).notForUploads);

/** The entry of `name`, with the common type. */
export function captureOptionSpec(name: CaptureOptionName): CaptureOptionSpec {
  return CAPTURE_OPTION_TABLE[name] as CaptureOptionSpec;
}
