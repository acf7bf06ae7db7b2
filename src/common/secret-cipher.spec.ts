import { randomBytes } from 'node:crypto';
import { SecretCipher, SecretUnreadableError } from './secret-cipher';

describe('SecretCipher', () => {
  const secret = 'whsec_Yb3kQ2nP8vXw1tR6mL0sA9dF4gH7jK5cZ2xV8bN1mQ0';
  const key = randomBytes(32);

  it('encrypts with AES-256-GCM: the stored form does not contain the secret and opens again', () => {
    const cipher = new SecretCipher([key]);
    const sealed = cipher.seal(secret, 'we_a');
    expect(sealed).toMatch(/^v1\.[0-9a-f]{8}\./);
    expect(sealed).not.toContain(secret.slice(6));
    expect(cipher.open(sealed, 'we_a')).toBe(secret);
    expect(cipher.seal(secret, 'we_a')).not.toBe(sealed);
  });

  it('refuses a sealed secret moved to another endpoint, tampered with, or read with another key', () => {
    const cipher = new SecretCipher([key]);
    const sealed = cipher.seal(secret, 'we_a');
    expect(() => cipher.open(sealed, 'we_b')).toThrow(SecretUnreadableError);
    const parts = sealed.split('.');
    const ct = Buffer.from(parts[4], 'base64url');
    ct[0] ^= 1;
    parts[4] = ct.toString('base64url');
    expect(() => cipher.open(parts.join('.'), 'we_a')).toThrow(SecretUnreadableError);
    expect(() => new SecretCipher([randomBytes(32)]).open(sealed, 'we_a')).toThrow(/not among the configured WEBHOOK_SECRET_KEY/);
    expect(() => new SecretCipher([]).open(sealed, 'we_a')).toThrow(SecretUnreadableError);
  });

  it('stores unencrypted without a key, and still opens those once a key is set', () => {
    const plain = new SecretCipher([]);
    const sealed = plain.seal(secret, 'we_a');
    expect(plain.encrypts).toBe(false);
    expect(sealed).toBe(`plain.${secret}`);
    expect(new SecretCipher([key]).open(sealed, 'we_a')).toBe(secret);
  });

  it('rejects keys that are not 32 bytes', () => {
    expect(() => new SecretCipher([randomBytes(16)])).toThrow(/32 bytes/);
  });

  it('rotates keys: the first key seals, every configured key opens, isCurrent tells what to re-seal', () => {
    const oldKey = randomBytes(32);
    const newKey = randomBytes(32);
    const before = new SecretCipher([oldKey]).seal(secret, 'we_a');
    const rotating = new SecretCipher([newKey, oldKey]);
    expect(rotating.open(before, 'we_a')).toBe(secret);
    expect(rotating.isCurrent(before)).toBe(false);
    const after = rotating.seal(secret, 'we_a');
    expect(rotating.isCurrent(after)).toBe(true);
    expect(new SecretCipher([newKey]).open(after, 'we_a')).toBe(secret);
    expect(() => new SecretCipher([newKey]).open(before, 'we_a')).toThrow(SecretUnreadableError);
    expect(rotating.isCurrent(`plain.${secret}`)).toBe(false);
    expect(new SecretCipher([]).isCurrent(`plain.${secret}`)).toBe(true);
  });
});
