import { z } from 'zod';
import { hostAllowed } from '../common/host-patterns';

/**
 * A browser profile's state (CONTRACT.md, "Browser profiles"): Playwright's storage state, the shape
 * `browserContext.storageState()` writes and `browser.newContext({ storageState })` reads, so a
 * state file made with Playwright is accepted as it is. Only cookies and local storage are kept.
 */

/** Largest state, bytes of its JSON (CONTRACT.md, "Browser profiles": at most 1 MiB). */
export const STORAGE_STATE_MAX_BYTES = 1024 * 1024;

/** Playwright's `sameSite` values. */
const SAME_SITE = ['Strict', 'Lax', 'None'] as const;

const cookieSchema = z.strictObject({
  name: z.string('must be a string').min(1, 'must not be empty').max(4096, 'must be at most 4096 characters'),
  value: z.string('must be a string').max(16_384, 'must be at most 16384 characters'),
  domain: z.string('must be a string').min(1, 'must not be empty').max(253, 'must be at most 253 characters'),
  path: z.string('must be a string').max(2048, 'must be at most 2048 characters').optional().meta({ description: 'Default /' }),
  expires: z.number('must be a number').optional().meta({ description: 'Unix seconds; -1 (default) for a session cookie' }),
  httpOnly: z.boolean('must be a boolean').optional(),
  secure: z.boolean('must be a boolean').optional(),
  sameSite: z.enum(SAME_SITE, `must be one of ${SAME_SITE.join(', ')}`).optional(),
  // Written by newer Playwright versions for partitioned (CHIPS) cookies; accepted and not kept.
  partitionKey: z.string('must be a string').max(2048).optional(),
});

const originSchema = z.strictObject({
  origin: z
    .string('must be a string')
    .max(2048, 'must be at most 2048 characters')
    .refine((origin) => /^https?:\/\//i.test(origin) && URL.canParse(origin), 'must be an http or https origin'),
  localStorage: z.array(
    z.strictObject({ name: z.string('must be a string'), value: z.string('must be a string') }),
    'must be an array of { name, value }',
  ),
});

/** Playwright's storage state as a customer sends it (fields Playwright always writes may be left out of hand-written files). */
export const storageStateSchema = z
  .strictObject({
    cookies: z.array(cookieSchema, 'must be an array of cookies').optional().meta({ description: 'Default none' }),
    origins: z
      .array(originSchema, 'must be an array of { origin, localStorage }')
      .optional()
      .meta({ description: 'Local storage by origin; default none' }),
  })
  .refine((state) => Buffer.byteLength(JSON.stringify(state)) <= STORAGE_STATE_MAX_BYTES, {
    message: `must be at most ${STORAGE_STATE_MAX_BYTES} bytes of JSON (1 MiB)`,
  })
  .meta({
    description:
      "Playwright's storage state (`browserContext.storageState()`): `{ cookies: [...], origins: [{ origin, localStorage: [{ name, value }] }] }`, at most 1 MiB. Cookies and origins outside `allowedDomains` are dropped.",
    example: {
      cookies: [
        { name: 'session', value: '…', domain: 'app.example.com', path: '/', expires: -1, httpOnly: true, secure: true, sameSite: 'Lax' },
      ],
      origins: [{ origin: 'https://app.example.com', localStorage: [{ name: 'token', value: '…' }] }],
    },
  });

/** The storage state as sent. */
export type StorageStateInput = z.output<typeof storageStateSchema>;

/** A stored cookie: every field Playwright's `newContext({ storageState })` needs. */
export interface StoredCookie {
  name: string;
  value: string;
  domain: string;
  path: string;
  /** Unix seconds; -1 for a session cookie. */
  expires: number;
  httpOnly: boolean;
  secure: boolean;
  sameSite: (typeof SAME_SITE)[number];
}

/** The state as stored and handed to a browser context (Playwright's `storageState` object). */
export interface StorageState {
  cookies: StoredCookie[];
  origins: { origin: string; localStorage: { name: string; value: string }[] }[];
}

/**
 * Whether a cookie's domain is within `allowedDomains` ({@link hostAllowed}): the host it names, a
 * leading dot dropped (a `.example.com` cookie is kept when `example.com` is allowed, so a wildcard
 * `*.example.com` alone does not keep a cookie of the apex).
 */
export function cookieAllowed(domain: string, allowedDomains: readonly string[]): boolean {
  return allowedDomains.length > 0 && hostAllowed(domain.replace(/^\./, ''), allowedDomains);
}

/** Whether an origin's host is within `allowedDomains`. */
export function originAllowed(origin: string, allowedDomains: readonly string[]): boolean {
  try {
    return allowedDomains.length > 0 && hostAllowed(new URL(origin).hostname, allowedDomains);
  } catch {
    return false;
  }
}

/**
 * The state kept for a profile bound to `allowedDomains` (CONTRACT.md, "Browser profiles": cookies and
 * origins outside them are dropped): cookies with Playwright's defaults filled in (`path` `/`,
 * `expires` -1, `httpOnly`/`secure` false, `sameSite` `Lax`) and `partitionKey` dropped, origins
 * serialised as `scheme://host[:port]`. Also applied to a stored state when it is used, so a state
 * saved before `allowedDomains` narrowed never reaches a page outside them.
 */
export function filterStorageState(state: StorageStateInput | StorageState, allowedDomains: readonly string[]): StorageState {
  return {
    cookies: (state.cookies ?? [])
      .filter((c) => cookieAllowed(c.domain, allowedDomains))
      .map((c) => ({
        name: c.name,
        value: c.value,
        domain: c.domain,
        path: c.path ?? '/',
        expires: c.expires ?? -1,
        httpOnly: c.httpOnly ?? false,
        secure: c.secure ?? false,
        sameSite: c.sameSite ?? 'Lax',
      })),
    origins: (state.origins ?? [])
      .filter((o) => originAllowed(o.origin, allowedDomains))
      .map((o) => ({ origin: new URL(o.origin).origin, localStorage: o.localStorage.map(({ name, value }) => ({ name, value })) })),
  };
}

/** Bytes of a state's JSON, as `sizeBytes` reports and the 1 MiB cap counts. */
export function storageStateBytes(state: StorageState): number {
  return Buffer.byteLength(JSON.stringify(state));
}
