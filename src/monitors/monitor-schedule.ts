import { Cron } from 'croner';
import { isTimeZone } from '../capture/capture-options';
import type { FieldError } from '../common/api-error';
import type { MonitorSchedule } from './monitor.entity';

/** Jitter added to each slot: up to this share of the interval (CONTRACT.md, "Monitors")… */
const JITTER_SHARE = 0.1;
/** …and at most this many ms. */
const JITTER_MAX_MS = 60_000;

/** Upcoming runs of a cron expression looked at when checking that they are far enough apart. */
const CRON_RUNS_CHECKED = 200;

/** A schedule as sent (`timezone` optional). */
export type ScheduleRequest = { intervalSeconds: number } | { cron: string; timezone?: string };

/**
 * A paused croner job for `cron` in `timezone`. UTC (the default zone) is given as a fixed offset:
 * croner then skips its `Intl` time-zone conversions, and {@link checkSchedule}'s 200 runs took 4 ms
 * instead of 95 ms (docs/monitors.md).
 */
function cronOf(cron: string, timezone: string): Cron {
  return new Cron(cron, timezone === 'UTC' ? { utcOffset: 0, paused: true } : { timezone, paused: true });
}

/**
 * The schedule with its defaults (`timezone` UTC), or the problems with it (CONTRACT.md, "Monitors"):
 * `intervalSeconds` below `minIntervalS`; a `cron` that is not five fields croner accepts; an unknown
 * IANA `timezone`; cron runs closer than `minIntervalS` s apart (among the next 200 runs).
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
  let runs: Date[];
  try {
    runs = cronOf(cron, timezone).nextRuns(CRON_RUNS_CHECKED, now);
  } catch {
    return { schedule: null, errors: [{ field: 'schedule.cron', message: 'is not a valid cron expression' }] };
  }
  if (!runs.length) return { schedule: null, errors: [{ field: 'schedule.cron', message: 'never runs' }] };
  for (let i = 1; i < runs.length; i++) {
    if (runs[i].getTime() - runs[i - 1].getTime() < minIntervalS * 1000) {
      return {
        schedule: null,
        errors: [{ field: 'schedule.cron', message: `runs more often than every ${minIntervalS} s (MONITOR_MIN_INTERVAL_S)` }],
      };
    }
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
