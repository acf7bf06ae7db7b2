import { createHash } from 'node:crypto';

/**
 * SHA-256 of `data` (a string is hashed as its UTF-8 bytes), as 64 lowercase hex digits: the form stored
 * and compared for API key secrets (spec section 2.2), dashboard password-link and session tokens,
 * uploaded documents (`upload:<sha256>`) and idempotency fingerprints (CONTRACT.md, "Idempotency").
 */
export function sha256Hex(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/**
 * SHA-256 of `data` (a string as its UTF-8 bytes), the 32 raw bytes: equal-length digests of tokens for
 * `crypto.timingSafeEqual`, which refuses inputs of different lengths.
 */
export function sha256Bytes(data: string | Buffer): Buffer {
  return createHash('sha256').update(data).digest();
}
