import { Logger } from '@nestjs/common';
import { loadConfig } from '../../src/config/app-config';
import { KeyCache } from '../../src/accounts/key-cache';
import { workerQueuePrefix } from '../support/test-app';

/**
 * The key cache's Redis connection (src/accounts/key-cache.ts) on a real Redis: it opens at the first
 * lookup, which loads without the cache and is not reported as Redis failing; a Redis that refuses
 * connections is reported once its first attempt failed.
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
});
