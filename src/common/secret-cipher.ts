import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { sha256Hex } from './hashing';

/** Thrown by {@link SecretCipher.open} when a stored secret cannot be read back with the configured keys. */
export class SecretUnreadableError extends Error {}

const ENCRYPTED = 'v1';
const PLAIN = 'plain';

/** `keyId` of a key: the first 8 hex digits of its SHA-256 (stored with each sealed secret, never the key). */
export function secretKeyId(key: Buffer): string {
  return sha256Hex(key).slice(0, 8);
}

/**
 * Seals secrets for storage under `WEBHOOK_SECRET_KEY(S)` (docs/webhooks.md#configuration): webhook signing secrets,
 * and the stored responses of `Idempotency-Key` requests (which can hold a signing secret). With keys:
 * AES-256-GCM under the first key with a random 12-byte IV and a context as associated data (the
 * endpoint id, or the key's scope: a sealed value copied to another row does not open), stored as
 * `v1.<keyId>.<iv>.<tag>.<ciphertext>` (base64url; see {@link secretKeyId}); a sealed secret opens
 * with whichever configured key it names, so `WEBHOOK_SECRET_KEYS=<new>,<old>` rotates
 * the key without downtime and `webhook:reseal` then moves every secret to the first key.
 * Without keys (`WEBHOOK_SECRET_KEY(S)` unset): stored as `plain.<secret>`, which always opens.
 */
export class SecretCipher {
  private readonly keys: Array<{ id: string; key: Buffer }>;

  /** `keys`: 32 bytes each, newest first; empty to store secrets unencrypted. Throws on another length. */
  constructor(keys: Buffer[]) {
    if (keys.some((k) => k.length !== 32)) throw new Error('every secret key must be 32 bytes');
    this.keys = keys.map((key) => ({ id: secretKeyId(key), key }));
  }

  /** Whether secrets are encrypted at rest. */
  get encrypts(): boolean {
    return this.keys.length > 0;
  }

  /** Seals `secret` bound to `context` (the endpoint id) under the first key. */
  seal(secret: string, context: string): string {
    if (!this.keys.length) return `${PLAIN}.${secret}`;
    const { id, key } = this.keys[0];
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    const parts = [iv, cipher.getAuthTag(), ciphertext].map((b) => b.toString('base64url'));
    return [ENCRYPTED, id, ...parts].join('.');
  }

  /** Whether `stored` was encrypted by {@link seal} (under any key), as opposed to text stored as it is. */
  isEncrypted(stored: string): boolean {
    return stored.startsWith(`${ENCRYPTED}.`);
  }

  /** Whether `sealed` is already in the form {@link seal} writes now (under the first key, or plain without keys). */
  isCurrent(sealed: string): boolean {
    return this.keys.length ? sealed.startsWith(`${ENCRYPTED}.${this.keys[0].id}.`) : sealed.startsWith(`${PLAIN}.`);
  }

  /**
   * The secret sealed by {@link seal} with the same `context`, under any configured key. Throws
   * {@link SecretUnreadableError} when it was encrypted with a key that is not configured (or none
   * is), or was tampered with.
   */
  open(sealed: string, context: string): string {
    if (sealed.startsWith(`${PLAIN}.`)) return sealed.slice(PLAIN.length + 1);
    const [version, keyId, iv, tag, ciphertext] = sealed.split('.');
    if (version !== ENCRYPTED || ciphertext === undefined) throw new SecretUnreadableError('unknown sealed secret format');
    const key = this.keys.find((k) => k.id === keyId)?.key;
    if (!key) {
      throw new SecretUnreadableError(
        `signing secret was encrypted with key ${keyId}, which is not among the configured WEBHOOK_SECRET_KEY(S)`,
      );
    }
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretUnreadableError('signing secret failed authentication (tampered, or sealed for another endpoint)');
    }
  }
}
