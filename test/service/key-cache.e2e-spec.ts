import { Logger } from '@nestjs/common';
import { loadConfig } from '../../src/config/app-config';
import { KEY_CACHE_REFRESH_AHEAD_MS, KEY_CACHE_TTL_MS, KeyCache } from '../../src/accounts/key-cache';
import { workerQueuePrefix } from '../support/test-app';

/**
 * The key cache's Redis connection (src/accounts/key-cache.ts) on a real Redis: it opens at the first
 * lookup, which loads without the cache and is not reported as Redis failing; a Redis that refuses
 * connections is reported once its first attempt failed. Once connected: one load per key and auth
 * version for lookups at once, a background reload in an entry's last second, and `peek` under the
 * version read.
 */
describe('key cache connection (service, real Redis)', () => {
  // The run's Redis, under this worker's prefix (test/support/worker-env.ts).
  const config = loadConfig({ ...process.env, QUEUE_PREFIX: workerQueuePrefix('key-cache') });
  const caches: KeyCache[] = [];
  const cacheOn = (redisUrl: string) => {
    const cache = new KeyCache({ ...config, redisUrl });
    caches.push(cache);
    return cache;
  };
  let warnings: string[];

  beforeEach(() => {
    warnings = [];
    jest.spyOn(Logger.prototype, 'warn').mockImplementation((message: unknown) => void warnings.push(String(message)));
  });

  afterEach(async () => {
    jest.restoreAllMocks();
    await Promise.all(caches.splice(0).map((cache) => cache.onModuleDestroy()));
  });

  it('loads the first lookup while its connection opens, without a warning, and caches once connected', async () => {
    const cache = cacheOn(config.redisUrl);
    let loads = 0;
    const load = async () => `value ${++loads}`;
    expect(await cache.get('k', load)).toBe('value 1');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await cache.get('k', load)).toBe('value 2');
    expect(await cache.get('k', load)).toBe('value 2');
    expect(warnings).toEqual([]);
  });

  it('warns once a Redis that refuses connections has failed its first attempt', async () => {
    // Port 9 (discard) on loopback: nothing listens there, so the connection is refused at once.
    const cache = cacheOn('redis://127.0.0.1:9');
    const load = async () => 'value';
    expect(await cache.get('k', load)).toBe('value');
    expect(warnings).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await cache.get('k', load)).toBe('value');
    expect(warnings).toEqual([expect.stringContaining('Key lookups are not cached: Redis does not answer')]);
  });

  /** A cache whose connection is open (its first lookup loads without the cache while it opens). */
  const connectedCache = async () => {
    const cache = cacheOn(config.redisUrl);
    await cache.get('warm-up', async () => 'value');
    const deadline = Date.now() + 10_000;
    while ((await cache.version()) === null) {
      if (Date.now() > deadline) throw new Error('the key cache did not connect to Redis in 10 s');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return cache;
  };

  it('lookups of one key at once share one load; a lookup in the last second reloads in the background', async () => {
    const cache = await connectedCache();
    let loads = 0;
    const load = async () => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      return `value ${++loads}`;
    };
    expect(await Promise.all(Array.from({ length: 10 }, () => cache.get('k', load)))).toEqual(Array(10).fill('value 1'));
    expect(loads).toBe(1);

    // Near the end of the entry's life: answered from the entry, reloaded once behind it.
    const now = Date.now();
    jest.spyOn(Date, 'now').mockReturnValue(now + KEY_CACHE_TTL_MS - KEY_CACHE_REFRESH_AHEAD_MS / 2);
    expect(await Promise.all([cache.get('k', load), cache.get('k', load)])).toEqual(['value 1', 'value 1']);
    const deadline = performance.now() + 10_000;
    while ((await cache.get('k', load)) === 'value 1') {
      if (performance.now() > deadline) throw new Error('no background reload in 10 s');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(loads).toBe(2);
  });

  it('peek answers the entry under the version read, and nothing once a bump changed it', async () => {
    const cache = await connectedCache();
    await cache.get('p', async () => 'cached');
    expect(cache.peek('p', (await cache.version()) as string)).toBe('cached');
    await cache.bump();
    expect(cache.peek('p', (await cache.version()) as string)).toBeUndefined();
  });
});
