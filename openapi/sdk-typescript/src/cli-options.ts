/**
 * The CLI's flag for every request field, one table per request body, checked against the generated
 * types: a field the OpenAPI document adds or removes breaks the SDK's type check until its flag is
 * added here. Flags are the field names in kebab case (`fullPage` → `--full-page`).
 */
import type { CreateRunRequest, CreateScreenshotRequest } from './types';

/** How a flag's text becomes the field's value: JSON kinds also accept `@file` (a JSON file). */
export type FlagKind = 'boolean' | 'integer' | 'number' | 'string' | 'json' | 'list';

export interface FlagSpec {
  kind: FlagKind;
  description: string;
}

const shared = {
  blockAds: { kind: 'boolean', description: 'block requests on the ad lists (EasyList)' },
  blockCookieBanners: { kind: 'boolean', description: 'dismiss or hide cookie consent banners' },
  blockTrackers: { kind: 'boolean', description: 'block requests on the tracker lists (EasyPrivacy)' },
  cookies: { kind: 'json', description: 'cookies set before navigation: JSON array [{"name","value",…}] or @file' },
  darkMode: { kind: 'boolean', description: 'emulate prefers-color-scheme: dark' },
  device: { kind: 'string', description: 'emulate a device of Playwright\'s list, e.g. "iPhone 15"' },
  headers: { kind: 'json', description: 'extra request headers to the page\'s origin: JSON object or @file' },
  height: { kind: 'integer', description: 'viewport height, CSS px' },
  locale: { kind: 'string', description: 'navigator.language and Accept-Language, e.g. de-DE' },
  reducedMotion: { kind: 'boolean', description: 'emulate prefers-reduced-motion: reduce' },
  scale: { kind: 'number', description: 'device scale factor (image is width×scale by height×scale px)' },
  timezone: { kind: 'string', description: 'IANA time zone of the page, e.g. Europe/Berlin' },
  userAgent: { kind: 'string', description: 'User-Agent of every request' },
  width: { kind: 'integer', description: 'viewport width, CSS px' },
} as const satisfies Record<string, FlagSpec>;

/** Every field of `POST /v1/screenshot` except `url` (the positional argument). */
export const CAPTURE_FLAGS = {
  ...shared,
  cache: { kind: 'boolean', description: 'reuse a recent identical capture (not counted against the quota)' },
  cacheTtl: { kind: 'integer', description: 'how old a reused capture may be, s (with --cache)' },
  clip: { kind: 'json', description: 'capture this rectangle: JSON {"x","y","width","height"} in CSS px' },
  css: { kind: 'string', description: 'style sheet added after load' },
  delay: { kind: 'integer', description: 'ms to wait after load before capturing' },
  format: { kind: 'string', description: 'png | jpeg | webp | pdf' },
  fullPage: { kind: 'boolean', description: 'capture the whole scrollable page' },
  hideSelectors: { kind: 'list', description: 'hide elements matching this CSS selector (repeatable)' },
  javascript: { kind: 'string', description: 'script run in the page after load (body of an async function)' },
  pdf: { kind: 'json', description: 'PDF settings: JSON object or @file (with --format pdf)' },
  quality: { kind: 'integer', description: 'jpeg/webp quality, 1–100' },
  selector: { kind: 'string', description: 'capture the box of the first element matching this CSS selector' },
  waitForSelector: { kind: 'string', description: 'wait until an element matching this CSS selector is visible' },
  waitUntil: { kind: 'string', description: 'load | domcontentloaded | networkidle' },
} as const satisfies Record<Exclude<keyof CreateScreenshotRequest, 'url'>, FlagSpec>;

/** Every field of `POST /v1/runs` except `url` (positional) and `steps` (`--steps <file>`). */
export const RUN_FLAGS = {
  ...shared,
  video: { kind: 'boolean', description: 'record a WebM video of the session (saved beside the output)' },
  timeoutMs: { kind: 'integer', description: 'the whole run\'s time budget, ms' },
} as const satisfies Record<Exclude<keyof CreateRunRequest, 'url' | 'steps'>, FlagSpec>;

/** `fullPage` → `full-page`. */
export function kebab(field: string): string {
  return field.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}
