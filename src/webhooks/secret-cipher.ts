import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/** Thrown by {@link SecretCipher.open} when a stored secret cannot be read back with the current key. */
export class SecretUnreadableError extends Error {}

const ENCRYPTED = 'v1';
const PLAIN = 'plain';

/**
 * Seals webhook signing secrets for storage. With a 32-byte key: AES-256-GCM with a random 12-byte IV
 * and the endpoint id as associated data (a sealed secret copied to another row does not open), stored
 * as `v1.<keyId>.<iv>.<tag>.<ciphertext>` (base64url; `keyId` = first 8 hex digits of SHA-256(key)).
 * Without a key (`WEBHOOK_SECRET_KEY` unset): stored as `plain.<secret>`. Either form opens later, so
 * setting a key affects new and rotated secrets; existing ones stay readable.
 */
export class SecretCipher {
  private readonly keyId: string | null;

  /** `key`: 32 bytes, or null to store secrets unencrypted. Throws on another key length. */
  constructor(private readonly key: Buffer | null) {
    if (key && key.length !== 32) throw new Error('the secret key must be 32 bytes');
    this.keyId = key ? createHash('sha256').update(key).digest('hex').slice(0, 8) : null;
  }

  /** Whether secrets are encrypted at rest. */
  get encrypts(): boolean {
    return this.key !== null;
  }

  /** Seals `secret` bound to `context` (the endpoint id). */
  seal(secret: string, context: string): string {
    if (!this.key) return `${PLAIN}.${secret}`;
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    const parts = [iv, cipher.getAuthTag(), ciphertext].map((b) => b.toString('base64url'));
    return [ENCRYPTED, this.keyId, ...parts].join('.');
  }

  /**
   * The secret sealed by {@link seal} with the same `context`. Throws {@link SecretUnreadableError}
   * when it was encrypted with another key (or none is configured now) or was tampered with.
   */
  open(sealed: string, context: string): string {
    if (sealed.startsWith(`${PLAIN}.`)) return sealed.slice(PLAIN.length + 1);
    const [version, keyId, iv, tag, ciphertext] = sealed.split('.');
    if (version !== ENCRYPTED || ciphertext === undefined) throw new SecretUnreadableError('unknown sealed secret format');
    if (!this.key || keyId !== this.keyId) {
      throw new SecretUnreadableError(`signing secret was encrypted with key ${keyId}, which is not the configured WEBHOOK_SECRET_KEY`);
    }
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretUnreadableError('signing secret failed authentication (tampered, or sealed for another endpoint)');
    }
  }
}
