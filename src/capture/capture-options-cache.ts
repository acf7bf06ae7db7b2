import { canonicalJson } from '../common/canonical-json';
import { sha256Hex } from '../common/hashing';
import type { CaptureOptions } from './capture-options-derived';

/**
 * The capture cache key (CONTRACT.md, "Capture options": cache): hex SHA-256 of the target (a URL
 * WHATWG-serialised, or `upload:<sha256>`) and the resolved options that shape the result (every
 * option but `cache` and `cacheTtl`), in canonical JSON. The account is the other half of the key.
 * With a `profile` (CONTRACT.md, "Browser profiles": a cached capture is never shared between a
 * request with a profile and one without, or between two profiles), the profile's id, its state
 * version `profileVersion` (a changed state never reuses an image of the old one) and `profileCheck`
 * are part of it; without one the key is what it was before profiles existed.
 */
export function captureCacheKey(target: string, options: CaptureOptions, profileVersion: number | null = null): string {
  let canonicalTarget = target;
  try {
    if (!target.startsWith('upload:')) canonicalTarget = new URL(target).href;
  } catch {
    /* validated earlier; keep as is */
  }
  const { cache: _cache, cacheTtlS: _ttl, profile, profileCheck, ...shaping } = options;
  const withProfile = profile ? { profile: { id: profile, version: profileVersion, check: profileCheck } } : {};
  return sha256Hex(canonicalJson({ target: canonicalTarget, options: shaping, ...withProfile }));
}

/**
 * The one rule of a fresh cached capture (CONTRACT.md, "Capture options": cache, and "Render links":
 * a capture is fresh for `cacheTtl` seconds): a capture that completed at `completedAtMs` (epoch ms)
 * may be reused at `nowMs` while it is at most `ttlS` seconds old. Only real captures count: a job that
 * was itself answered from the cache (`cached: true`) is never a source, so reuse cannot stretch a
 * capture's life past its TTL. The SQL form is {@link freshCaptureSince}.
 */
export function isFreshCapture(completedAtMs: number, ttlS: number, nowMs: number): boolean {
  return completedAtMs >= freshCaptureSince(nowMs, ttlS).getTime();
}

/** The oldest completion time (inclusive) of a capture still fresh at `nowMs` for `ttlS` seconds: the `completedAt >=` bound of {@link isFreshCapture}. */
export function freshCaptureSince(nowMs: number, ttlS: number): Date {
  return new Date(nowMs - ttlS * 1000);
}
