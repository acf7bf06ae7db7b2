import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import Redis from 'ioredis';
import { APP_CONFIG, AppConfig } from '../config/app-config';

/** How long a cached key lookup is served, ms (CONTRACT.md, "Render links": revocations still apply at once). */
export const KEY_CACHE_TTL_MS = 5_000;
/** Most entries kept; the oldest go first. */
const MAX_ENTRIES = 10_000;
/**
 * How long before an entry expires a lookup of it starts loading it again in the background, ms: a
 * key in steady use is reloaded while its entry is still served, so its lookups never wait for the
 * load (docs/render-links.md#performance).
 */
export const KEY_CACHE_REFRESH_AHEAD_MS = 1_000;
/** Longest wait for the version read, ms: past it the lookup is made without the cache. */
const REDIS_COMMAND_TIMEOUT_MS = 250;
/** At most one "Redis unreachable" warning per this many ms. */
const WARN_EVERY_MS = 60_000;

interface Entry {
  value: unknown;
  version: string;
  expiresAt: number;
}

/** A load in flight: lookups of the same key under the same version join it. */
interface Load {
  version: string;
  promise: Promise<unknown>;
}

/**
 * A short-lived in-process cache of key lookups (render keys, API keys) whose invalidation is
 * immediate in every process: each entry remembers the auth version it was loaded under, a Redis
 * counter (`{QUEUE_PREFIX}:auth-version`) read for each lookup (one read shared by the lookups that
 * start before it is sent, at most one in flight: {@link version}), and is served only while that
 * counter is unchanged and for at most {@link KEY_CACHE_TTL_MS}. Whatever revokes, rotates
 * or deletes a key calls {@link bump} after its commit: the next lookup anywhere loads again. The
 * version is read before a load, so a load that raced a revocation is stored under the old version
 * and never served. Lookups of one key under one version share one load (a burst of requests for a
 * key whose entry expired makes one query), and a lookup in an entry's last
 * {@link KEY_CACHE_REFRESH_AHEAD_MS} starts that load in the background and is answered from the entry.
 *
 * While Redis does not answer (down, or slower than {@link REDIS_COMMAND_TIMEOUT_MS}) every lookup
 * loads (nothing is cached or served from the cache); a failed {@link bump} is logged, and other
 * processes may then serve the revoked key for at most {@link KEY_CACHE_TTL_MS}.
 */
@Injectable()
export class KeyCache implements OnModuleDestroy {
  private readonly logger = new Logger(KeyCache.name);
  private readonly entries = new Map<string, Entry>();
  private readonly loads = new Map<string, Load>();
  private readonly versionKey: string;
  private redis: Redis | null = null;
  /** The connection's first attempt has not ended yet (a lookup then loads without a warning). */
  private opening = false;
  private lastWarningAt = 0;
  /** The version read that lookups starting now join ({@link version}), until it is sent, and its resolver. */
  private nextVersionRead: Promise<string | null> | null = null;
  private resolveNextVersionRead: ((version: string | null) => void) | null = null;
  /** A version read has been sent and not answered yet. */
  private versionReadInFlight = false;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    this.versionKey = `${config.queuePrefix}:auth-version`;
  }

  /**
   * The value cached under `key` when still valid, else `load()`'s answer (cached when not null), or
   * the answer of a load of `key` already in flight under the same auth version. `load`'s errors
   * propagate and nothing is cached.
   */
  async get<T>(key: string, load: () => Promise<T | null>): Promise<T | null> {
    const version = await this.version();
    if (version === null) return load();
    const entry = this.entries.get(key);
    const now = Date.now();
    if (entry && entry.version === version && entry.expiresAt > now) {
      // A background reload; its failure leaves the entry to expire, and the next lookup loads.
      if (entry.expiresAt - now <= KEY_CACHE_REFRESH_AHEAD_MS) this.load(key, version, load).catch(() => undefined);
      return entry.value as T;
    }
    return this.load(key, version, load);
  }

  /**
   * The value cached under `key` for the auth `version` ({@link version}'s answer for a lookup that
   * started before it was read), synchronously, or undefined when none is cached or valid: then
   * {@link get} loads it. No reload is started.
   */
  peek<T>(key: string, version: string): T | undefined {
    const entry = this.entries.get(key);
    return entry && entry.version === version && entry.expiresAt > Date.now() ? (entry.value as T) : undefined;
  }

  /** `load()` under `version`, shared by the lookups of `key` under that version while it runs; caches a value that is not null. */
  private load<T>(key: string, version: string, load: () => Promise<T | null>): Promise<T | null> {
    const running = this.loads.get(key);
    if (running && running.version === version) return running.promise as Promise<T | null>;
    const startedAt = Date.now();
    const promise = load().then(
      (value) => {
        if (this.loads.get(key)?.promise === promise) this.loads.delete(key);
        this.entries.delete(key);
        if (value === null) return null;
        this.entries.set(key, { value, version, expiresAt: startedAt + KEY_CACHE_TTL_MS });
        if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value as string);
        return value;
      },
      (err: unknown) => {
        if (this.loads.get(key)?.promise === promise) this.loads.delete(key);
        throw err;
      },
    );
    this.loads.set(key, { version, promise });
    return promise;
  }

  /**
   * Invalidates every cached lookup in every process (after a revocation, rotation or deletion has
   * committed). Never throws: a Redis failure is logged (see the class note).
   */
  async bump(): Promise<void> {
    this.entries.clear();
    this.loads.clear();
    try {
      const redis = this.client();
      if (redis.status !== 'ready') {
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error('not connected in 2000 ms')), 2_000);
          redis.once('ready', () => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      await redis.incr(this.versionKey);
    } catch (err) {
      this.logger.error(
        `Could not invalidate cached key lookups (${(err as Error).message}); other processes may serve them for up to ${KEY_CACHE_TTL_MS} ms`,
      );
    }
  }

  /**
   * The current auth version for a lookup starting now, or null when Redis does not answer (then
   * nothing may be served from the cache). One `GET` is shared by every lookup that starts before it
   * is sent, and at most one is in flight: the first lookup of an idle cache sends it on the next turn
   * of the event loop, lookups that start while it is in flight wait for the next one, sent when it
   * has answered. So under load a process reads the version once per Redis round trip rather than
   * once per request, and each lookup's read is still sent after it started: a bump committed before
   * a lookup began is always seen (CONTRACT.md, "Render links": a revoked key stops working at once).
   * {@link peek} takes its answer.
   */
  version(): Promise<string | null> {
    // The first lookup opens the connection and reads at once (its failure is not warned about).
    if (!this.redis) return this.readVersion();
    if (!this.nextVersionRead) {
      this.nextVersionRead = new Promise((resolve) => (this.resolveNextVersionRead = resolve));
      if (!this.versionReadInFlight) setImmediate(() => this.sendVersionRead());
    }
    return this.nextVersionRead;
  }

  /** Sends the version read that lookups have joined ({@link version}), and the next one once it answered if lookups joined that. */
  private sendVersionRead(): void {
    const resolve = this.resolveNextVersionRead;
    this.nextVersionRead = null;
    this.resolveNextVersionRead = null;
    if (!resolve) return;
    this.versionReadInFlight = true;
    void this.readVersion().then((version) => {
      this.versionReadInFlight = false;
      resolve(version);
      if (this.nextVersionRead) this.sendVersionRead();
    });
  }

  /**
   * The current auth version, or null when Redis does not answer; warns (at most once a minute) unless
   * the connection is still making its first attempt.
   */
  private async readVersion(): Promise<string | null> {
    try {
      return (await this.client().get(this.versionKey)) ?? '0';
    } catch (err) {
      // The connection opens at the first lookup, which therefore loads without the cache: not a failure.
      if (!this.opening && Date.now() - this.lastWarningAt >= WARN_EVERY_MS) {
        this.lastWarningAt = Date.now();
        this.logger.warn(`Key lookups are not cached: Redis does not answer (${(err as Error).message})`);
      }
      return null;
    }
  }

  /** Its own Redis connection, opened at the first use, without an offline queue (a lookup never waits for Redis to come back). */
  private client(): Redis {
    if (!this.redis) {
      this.redis = new Redis(this.config.redisUrl, {
        enableOfflineQueue: false,
        // Reads are already batched by version(): each is written at once, without ioredis's pipeline.
        enableAutoPipelining: false,
        maxRetriesPerRequest: 0,
        commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
        connectTimeout: 2_000,
        retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
      });
      this.opening = true;
      const opened = () => (this.opening = false);
      this.redis.once('ready', opened);
      this.redis.on('error', opened);
    }
    return this.redis;
  }

  async onModuleDestroy(): Promise<void> {
    const redis = this.redis;
    this.redis = null;
    if (redis) await redis.quit().catch(() => redis.disconnect());
  }
}
