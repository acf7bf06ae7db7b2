import { randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Id prefixes per resource type (CONTRACT.md, "Identifiers"). */
export const ID_PREFIX = {
  account: 'acc',
  apiKey: 'key',
  screenshot: 'scr',
  webhookEndpoint: 'we',
  event: 'evt',
  delivery: 'dlv',
  run: 'run',
  renderKey: 'rk',
  monitor: 'mon',
  monitorCheck: 'chk',
  storageDestination: 'dst',
  profile: 'prf',
  user: 'usr',
  session: 'ses',
  crawl: 'crl',
} as const;
export type IdKind = keyof typeof ID_PREFIX;

/** Length of the random part of every id. */
export const ID_RANDOM_LENGTH = 24;

/** CSPRNG bytes drawn 4 KiB at a time (one `getrandom` call per ~100 ids instead of one per id) and used once each. */
const pool = { bytes: Buffer.alloc(0), next: 0 };

function randomByte(): number {
  if (pool.next >= pool.bytes.length) {
    pool.bytes = randomBytes(4096);
    pool.next = 0;
  }
  return pool.bytes[pool.next++];
}

/**
 * `length` characters drawn uniformly from base62 with a CSPRNG (rejection sampling, no modulo bias).
 */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const byte = randomByte();
    if (byte < 248) out += BASE62[byte % 62];
  }
  return out;
}

/** A new id such as `scr_3fJ9…` (prefix, underscore, 24 base62 characters). */
export function newId(kind: IdKind): string {
  return `${ID_PREFIX[kind]}_${randomBase62(ID_RANDOM_LENGTH)}`;
}

/** Whether `value` has the shape of an id of `kind`; callers answer 404 `NOT_FOUND` when it does not. */
export function isId(kind: IdKind, value: string): boolean {
  return new RegExp(`^${ID_PREFIX[kind]}_[0-9A-Za-z]{${ID_RANDOM_LENGTH}}$`).test(value);
}
