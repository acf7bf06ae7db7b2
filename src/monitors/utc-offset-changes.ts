/** How far apart the offsets are sampled; no zone of the IANA database changes its offset twice within it. */
const SAMPLE_STEP_MS = 7 * 86_400_000;

/** One formatter per time zone, reused: building an `Intl.DateTimeFormat` costs far more than a call. */
const formats = new Map<string, Intl.DateTimeFormat>();

/**
 * `timezone`'s UTC offset at `atMs` (ms since the epoch), in ms: its wall clock minus UTC, e.g.
 * -18,000,000 for `America/New_York` in winter. `timezone` is an IANA zone (throws a `RangeError` for
 * an unknown one). One cached `Intl.DateTimeFormat` per zone, one `formatToParts` per call (about 7 µs).
 */
export function utcOffsetMs(timezone: string, atMs: number): number {
  let format = formats.get(timezone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formats.set(timezone, format);
  }
  const wall: Record<string, number> = {};
  for (const part of format.formatToParts(atMs)) wall[part.type] = Number(part.value);
  const wallMs = Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second);
  return wallMs - Math.floor(atMs / 1000) * 1000;
}

/** A change of a zone's UTC offset: the first second of the new offset, and the offsets before and after, ms. */
export interface UtcOffsetChange {
  atMs: number;
  beforeMs: number;
  afterMs: number;
}

/**
 * The changes of `timezone`'s UTC offset in `(fromMs, toMs]` (rounded out to whole seconds), ascending:
 * daylight saving time starting or ending, or a change of the zone's standard offset. The offset is
 * sampled every 7 days and each change narrowed down by bisection to the second: about 52 + 2 × 20
 * {@link utcOffsetMs} calls for a year of a zone with daylight saving time (about 1 ms). A zone changing
 * its offset twice within 7 days would show neither change; none of the IANA database's zones does
 * (every zone's changes of 2026–2028, sampled hourly, are at least 8 days apart).
 */
export function utcOffsetChanges(timezone: string, fromMs: number, toMs: number): UtcOffsetChange[] {
  const changes: UtcOffsetChange[] = [];
  const end = Math.ceil(toMs / 1000) * 1000;
  let at = Math.floor(fromMs / 1000) * 1000;
  let offset = utcOffsetMs(timezone, at);
  while (at < end) {
    const next = Math.min(at + SAMPLE_STEP_MS, end);
    const nextOffset = utcOffsetMs(timezone, next);
    if (nextOffset !== offset) {
      // Whole seconds: the offset at `low` is the old one, at `high` the new one; halve down to one second.
      let low = at;
      let high = next;
      while (high - low > 1000) {
        const mid = low + Math.floor((high - low) / 2000) * 1000;
        if (utcOffsetMs(timezone, mid) === offset) low = mid;
        else high = mid;
      }
      changes.push({ atMs: high, beforeMs: offset, afterMs: nextOffset });
    }
    at = next;
    offset = nextOffset;
  }
  return changes;
}

/** The last {@link upcomingUtcOffsetChanges} answer per zone, and the span it covers. */
const upcoming = new Map<string, { fromMs: number; toMs: number; changes: UtcOffsetChange[] }>();

/**
 * {@link utcOffsetChanges} of `timezone` in `(fromMs, fromMs + aheadMs]`, from a per-zone cache that
 * covers twice that span from the call that filled it: a zone's changes stay what the process's time
 * zone data says, so the sampling is paid about once per `aheadMs` per zone rather than per call.
 */
export function upcomingUtcOffsetChanges(timezone: string, fromMs: number, aheadMs: number): UtcOffsetChange[] {
  let cached = upcoming.get(timezone);
  if (!cached || fromMs < cached.fromMs || fromMs + aheadMs > cached.toMs) {
    cached = { fromMs, toMs: fromMs + 2 * aheadMs, changes: utcOffsetChanges(timezone, fromMs, fromMs + 2 * aheadMs) };
    upcoming.set(timezone, cached);
  }
  return cached.changes.filter((change) => change.atMs > fromMs && change.atMs <= fromMs + aheadMs);
}
