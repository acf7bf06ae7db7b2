import { randomBase62 } from '../common/ids';
import { sha256Hex } from '../common/hashing';

/** Prefix of every API key secret (spec section 2.2). */
export const API_KEY_SECRET_PREFIX = 'sk_live_';
/** Random base62 characters after the prefix (CONTRACT.md asks for at least 32). */
export const API_KEY_SECRET_RANDOM_LENGTH = 40;
/** Characters of the secret kept for display, prefix included. */
const DISPLAY_PREFIX_LENGTH = API_KEY_SECRET_PREFIX.length + 4;

/** A fresh secret `sk_live_<40 base62>` from a CSPRNG. */
export function newApiKeySecret(): string {
  return API_KEY_SECRET_PREFIX + randomBase62(API_KEY_SECRET_RANDOM_LENGTH);
}

/** Hex SHA-256 of a secret: what is stored and looked up. */
export function hashApiKeySecret(secret: string): string {
  return sha256Hex(secret);
}

/** The stored display prefix of a secret, e.g. `sk_live_AbCd`. */
export function displayPrefix(secret: string): string {
  return secret.slice(0, DISPLAY_PREFIX_LENGTH);
}
