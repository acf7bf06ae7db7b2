import { type Algorithm, hash, verify } from '@node-rs/argon2';
import { Inject, Injectable } from '@nestjs/common';
import pLimit from 'p-limit';
import { APP_CONFIG, AppConfig } from '../config/app-config';

/**
 * argon2id parameters: OWASP Password Storage Cheat Sheet's first recommended configuration
 * (m = 19 MiB, t = 2, p = 1).
 */
// `2` is `Algorithm.Argon2id` (an ambient const enum, unusable under isolatedModules).
export const ARGON2_OPTIONS = { algorithm: 2 satisfies Algorithm.Argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

/** How many argon2 computations this process has run, and the most that ever ran at once. */
export interface PasswordHashingStats {
  hashed: number;
  verified: number;
  peakInFlight: number;
}

/**
 * argon2id hashing and verification, at most `PASSWORD_HASH_CONCURRENCY` at once in this process
 * (CONTRACT.md, "Dashboard"; default 2): argon2 shares libuv's few threads with DNS lookups and file
 * I/O, so unbounded hashing would slow every request. Callers queue (FIFO) beyond the bound.
 */
@Injectable()
export class PasswordHasher {
  private readonly limit: pLimit.Limit;
  private inFlight = 0;
  private readonly counts: PasswordHashingStats = { hashed: 0, verified: 0, peakInFlight: 0 };

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.limit = pLimit(config.passwordHashConcurrency);
  }

  /** The argon2id hash (PHC string) of a password. */
  hash(password: string): Promise<string> {
    return this.run(() => hash(password, ARGON2_OPTIONS), 'hashed');
  }

  /** Whether the password matches the PHC hash; false for a malformed hash too. */
  verify(passwordHash: string, password: string): Promise<boolean> {
    return this.run(() => verify(passwordHash, password).catch(() => false), 'verified');
  }

  /** Counters since start (read by tests and the benchmark to see how much hashing requests caused). */
  stats(): PasswordHashingStats {
    return { ...this.counts };
  }

  private run<T>(work: () => Promise<T>, counter: 'hashed' | 'verified'): Promise<T> {
    return this.limit(async () => {
      this.counts[counter]++;
      this.counts.peakInFlight = Math.max(this.counts.peakInFlight, ++this.inFlight);
      try {
        return await work();
      } finally {
        this.inFlight--;
      }
    });
  }
}
