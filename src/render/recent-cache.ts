/**
 * A small in-process map whose entries expire: each lives until its own `expiresAt` (ms since the
 * epoch) and the map keeps at most `maxEntries` entries and `maxWeight` total weight (e.g. bytes),
 * dropping the oldest first. For the hot path of render links (docs/render-links.md#performance).
 */
export class RecentCache<T> {
  private readonly entries = new Map<string, { value: T; expiresAt: number; weight: number }>();
  private weight = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly maxWeight = Number.POSITIVE_INFINITY,
  ) {}

  /** The value of `key` when it has not expired at `now` (ms), else undefined (and the entry is dropped). */
  get(key: string, now: number): T | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt > now) return entry.value;
    this.delete(key);
    return undefined;
  }

  /** Keeps `value` under `key` until `expiresAt` (ms); a value heavier than the whole budget is not kept. */
  set(key: string, value: T, expiresAt: number, weight = 0): void {
    this.delete(key);
    if (weight > this.maxWeight) return;
    this.entries.set(key, { value, expiresAt, weight });
    this.weight += weight;
    while (this.entries.size > this.maxEntries || this.weight > this.maxWeight) this.delete(this.entries.keys().next().value as string);
  }

  delete(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.weight -= entry.weight;
  }
}
