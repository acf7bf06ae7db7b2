import { AppConfig } from '../config/app-config';
import { PasswordHasher } from './password-hasher';

describe('PasswordHasher (CONTRACT.md, "Dashboard": PASSWORD_HASH_CONCURRENCY)', () => {
  it('runs at most the configured number of argon2 computations at once, and all of them', async () => {
    const hasher = new PasswordHasher({ passwordHashConcurrency: 2 } as AppConfig);
    const hashes = await Promise.all(Array.from({ length: 6 }, (_, i) => hasher.hash(`password number ${i}`)));
    expect(await hasher.verify(hashes[3], 'password number 3')).toBe(true);
    expect(await hasher.verify(hashes[3], 'password number 4')).toBe(false);
    expect(await hasher.verify('not a hash', 'x')).toBe(false);
    expect(hasher.stats()).toEqual({ hashed: 6, verified: 3, peakInFlight: 2 });
  });
});
