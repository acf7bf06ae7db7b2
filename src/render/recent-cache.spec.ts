import { RecentCache } from './recent-cache';

describe('RecentCache (the render link hot path)', () => {
  it('serves an entry until its own expiry, then drops it', () => {
    const cache = new RecentCache<string>(10);
    cache.set('a', 'A', 1_000);
    expect(cache.get('a', 999)).toBe('A');
    expect(cache.get('a', 1_000)).toBeUndefined();
    cache.set('a', 'B', 5_000);
    expect(cache.get('a', 1_000)).toBe('B');
  });

  it('keeps at most maxEntries entries and maxWeight in all, dropping the oldest first; never keeps one heavier than the budget', () => {
    const cache = new RecentCache<number>(2, 100);
    cache.set('a', 1, 10_000, 40);
    cache.set('b', 2, 10_000, 40);
    cache.set('c', 3, 10_000, 10);
    expect([cache.get('a', 0), cache.get('b', 0), cache.get('c', 0)]).toEqual([undefined, 2, 3]);
    cache.set('d', 4, 10_000, 70);
    expect([cache.get('b', 0), cache.get('c', 0), cache.get('d', 0)]).toEqual([undefined, 3, 4]);
    cache.set('f', 6, 10_000, 60);
    expect([cache.get('c', 0), cache.get('d', 0), cache.get('f', 0)]).toEqual([undefined, undefined, 6]);
    cache.set('e', 5, 10_000, 101);
    expect([cache.get('f', 0), cache.get('e', 0)]).toEqual([6, undefined]);
  });
});
