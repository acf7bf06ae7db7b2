import { hash, verify } from '@node-rs/argon2';
import { ARGON2_OPTIONS, assertPasswordRules, PASSWORD_MIN_LENGTH, UserError } from './users.service';

describe('dashboard passwords', () => {
  it('need at least 12 characters (CONTRACT.md, "Dashboard") and at most 256', () => {
    expect(() => assertPasswordRules('x'.repeat(PASSWORD_MIN_LENGTH - 1))).toThrow(UserError);
    expect(() => assertPasswordRules('x'.repeat(PASSWORD_MIN_LENGTH))).not.toThrow();
    expect(() => assertPasswordRules('x'.repeat(257))).toThrow(UserError);
  });

  it('are hashed with argon2id at OWASP minimum cost or above (m ≥ 19 MiB, t ≥ 2)', async () => {
    const encoded = await hash('correct horse battery staple', ARGON2_OPTIONS);
    const [, algorithm, , params] = encoded.split('$');
    expect(algorithm).toBe('argon2id');
    const p = Object.fromEntries(params.split(',').map((kv) => kv.split('=').map((v, i) => (i ? Number(v) : v))));
    expect(p.m).toBeGreaterThanOrEqual(19456);
    expect(p.t).toBeGreaterThanOrEqual(2);
    expect(await verify(encoded, 'correct horse battery staple')).toBe(true);
    expect(await verify(encoded, 'wrong')).toBe(false);
  });
});
