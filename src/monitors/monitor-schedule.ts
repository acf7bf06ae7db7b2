import { Cron, CronPattern } from 'croner';
import { isTimeZone } from '../capture/capture-options';
import type { FieldError } from '../common/api-error';
import type { MonitorSchedule } from './monitor.entity';
import { upcomingUtcOffsetChanges } from './utc-offset-changes';

/** Jitter added to each slot: up to this share of the interval (CONTRACT.md, "Monitors")… */
const JITTER_SHARE = 0.1;
/** …and at most this many ms. */
const JITTER_MAX_MS = 60_000;

/** Upcoming runs looked at for a day's last run and the next day's first ({@link cronRunsTooClose}). */
const CRON_RUNS_CHECKED = 200;
/** How far ahead the zone's UTC offset changes are looked at ({@link cronRunsTooClose}), ms. */
const OFFSET_CHANGES_AHEAD_MS = 366 * 86_400_000;

/** A schedule as sent (`timezone` optional). */
export type ScheduleRequest = { intervalSeconds: number } | { cron: string; timezone?: string };

/**
 * A paused croner job for `cron` in `timezone`. UTC (the default zone) is given as a fixed offset:
 * croner then skips its `Intl` time-zone conversions (docs/monitors.md).
 */
function cronOf(cron: string, timezone: string): Cron {
  return new Cron(cron, timezone === 'UTC' ? { utcOffset: 0, paused: true } : { timezone, paused: true });
}

/** The indexes of `field` (croner's per-value flags) that are set, ascending. */
function setValues(field: readonly number[]): number[] {
  return field.flatMap((set, value) => (set ? [value] : []));
}

/**
 * Whether two consecutive runs of the five-field `cron` in `timezone` (an IANA zone) can come closer
 * than `minMs` ms, the rule of CONTRACT.md "Monitors" (`MONITOR_MIN_INTERVAL_S`). Throws what croner
 * throws for an invalid expression. Without walking hundreds of runs through `Intl` (docs/monitors.md):
 * - Two runs of one day. Every day the expression matches has the same times (its hours × its minutes,
 *   second 0), so the shortest gap between two of them, found from the minute and hour fields alone, is a
 *   gap between real runs on every matching day whose UTC offset does not change.
 * - A day's last run and the next day's first, 24 h minus the span of the day's times apart: only when
 *   two days in a row match, which depends on the calendar, so when that span leaves less than `minMs`
 *   the next 200 runs are looked at, computed on the wall clock (UTC, no `Intl`).
 * - Runs on either side of a change of the zone's UTC offset (the offset changes within the next 366 days,
 *   {@link upcomingUtcOffsetChanges}). Runs with no change between them are as far apart as on the wall
 *   clock, so only pairs around a change τ can differ: a skipped or doubled hour can bring two runs
 *   closer, and croner moves a run of a single fixed time that falls in a skipped hour to τ. Two
 *   consecutive runs around τ less than `minMs` apart both fall within `minMs` of τ, so the runs from
 *   τ − `minMs` to the first at or after τ + `minMs` hold them (at most 3 while none is too close);
 *   those come from croner in the zone, as the scheduler computes them ({@link nextCheckAt}). Their wall
 *   times lie within `minMs` of τ's wall times (before and after the change): a change with no wall-clock
 *   run there is passed over without asking croner in the zone.
 */
function cronRunsTooClose(cron: string, timezone: string, minMs: number, now: Date): boolean {
  const pattern = new CronPattern(cron);
  const minutes = setValues(pattern.minute);
  const hours = setValues(pattern.hour);
  const times = hours.flatMap((hour) => minutes.map((minute) => (hour * 60 + minute) * 60_000));
  for (let i = 1; i < times.length; i++) if (times[i] - times[i - 1] < minMs) return true;
  const wall = cronOf(cron, 'UTC');
  if (86_400_000 - (times[times.length - 1] - times[0]) < minMs) {
    const wallRuns = wall.nextRuns(CRON_RUNS_CHECKED, now);
    for (let i = 1; i < wallRuns.length; i++) if (wallRuns[i].getTime() - wallRuns[i - 1].getTime() < minMs) return true;
  }
  if (timezone === 'UTC') return false;
  const zoned = cronOf(cron, timezone);
  for (const { atMs, beforeMs, afterMs } of upcomingUtcOffsetChanges(timezone, now.getTime(), OFFSET_CHANGES_AHEAD_MS)) {
    // No wall-clock run within `minMs` of the change's wall-clock times: no run near it in the zone either.
    const nearby = wall.nextRun(new Date(atMs + Math.min(beforeMs, afterMs) - minMs));
    if (!nearby || nearby.getTime() >= atMs + Math.max(beforeMs, afterMs) + minMs) continue;
    for (let run = zoned.nextRun(new Date(atMs - minMs)); run && run.getTime() < atMs + minMs;) {
      const next = zoned.nextRun(run);
      if (next && next.getTime() - run.getTime() < minMs) return true;
      run = next;
    }
  }
  return false;
}

/**
 * The schedule with its defaults (`timezone` UTC), or the problems with it (CONTRACT.md, "Monitors"):
 * `intervalSeconds` below `minIntervalS`; a `cron` that is not five fields croner accepts; an unknown
 * IANA `timezone`; cron runs closer than `minIntervalS` s apart (as {@link cronRunsTooClose} finds them);
 * a cron expression with no run after `now`.
 */
export function checkSchedule(
  input: ScheduleRequest,
  minIntervalS: number,
  now: Date,
): { schedule: MonitorSchedule; errors: [] } | { schedule: null; errors: FieldError[] } {
  if ('intervalSeconds' in input) {
    if (input.intervalSeconds < minIntervalS) {
      return {
        schedule: null,
        errors: [{ field: 'schedule.intervalSeconds', message: `must be at least ${minIntervalS} (MONITOR_MIN_INTERVAL_S)` }],
      };
    }
    return { schedule: { intervalSeconds: input.intervalSeconds }, errors: [] };
  }
  const timezone = input.timezone ?? 'UTC';
  if (!isTimeZone(timezone)) return { schedule: null, errors: [{ field: 'schedule.timezone', message: 'must be an IANA time zone' }] };
  const cron = input.cron.trim().replace(/\s+/g, ' ');
  if (cron.split(' ').length !== 5) {
    return {
      schedule: null,
      errors: [{ field: 'schedule.cron', message: 'must have five fields (minute hour day-of-month month day-of-week)' }],
    };
  }
  let tooClose: boolean;
  try {
    if (!cronOf(cron, 'UTC').nextRun(now)) return { schedule: null, errors: [{ field: 'schedule.cron', message: 'never runs' }] };
    tooClose = cronRunsTooClose(cron, timezone, minIntervalS * 1000, now);
  } catch {
    return { schedule: null, errors: [{ field: 'schedule.cron', message: 'is not a valid cron expression' }] };
  }
  if (tooClose) {
    return {
      schedule: null,
      errors: [{ field: 'schedule.cron', message: `runs more often than every ${minIntervalS} s (MONITOR_MIN_INTERVAL_S)` }],
    };
  }
  return { schedule: { cron, timezone }, errors: [] };
}

/**
 * When the next check of `schedule` is due after `now`: the next slot strictly after `now` (so slots
 * missed while nothing ran are not made up one by one), plus a random jitter of up to 10 % of the
 * interval, at most 60 s (CONTRACT.md, "Monitors"). `random` returns [0, 1). Null when a cron
 * expression has no further run.
 */
export function nextCheckAt(schedule: MonitorSchedule, now: Date, random: () => number = Math.random): Date | null {
  let slot: number;
  let intervalMs: number;
  if ('intervalSeconds' in schedule) {
    intervalMs = schedule.intervalSeconds * 1000;
    slot = now.getTime() + intervalMs;
  } else {
    const [first, second] = cronOf(schedule.cron, schedule.timezone).nextRuns(2, now);
    if (!first) return null;
    slot = first.getTime();
    intervalMs = second ? second.getTime() - slot : 0;
  }
  return new Date(slot + Math.floor(random() * Math.min(intervalMs * JITTER_SHARE, JITTER_MAX_MS)));
}
