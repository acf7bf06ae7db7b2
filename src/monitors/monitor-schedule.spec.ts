import { Cron } from 'croner';
import { checkSchedule, nextCheckAt } from './monitor-schedule';

const NOW = new Date('2026-11-25T10:02:30.000Z');

describe('checkSchedule', () => {
  it('takes an interval from the configured minimum', () => {
    expect(checkSchedule({ intervalSeconds: 300 }, 300, NOW)).toEqual({ schedule: { intervalSeconds: 300 }, errors: [] });
    expect(checkSchedule({ intervalSeconds: 299 }, 300, NOW).errors).toEqual([
      { field: 'schedule.intervalSeconds', message: 'must be at least 300 (MONITOR_MIN_INTERVAL_S)' },
    ]);
  });

  it('takes five-field cron in an IANA zone, UTC by default, runs far enough apart', () => {
    expect(checkSchedule({ cron: '0 9 * * 1-5' }, 300, NOW).schedule).toEqual({ cron: '0 9 * * 1-5', timezone: 'UTC' });
    expect(checkSchedule({ cron: '*/5 * * * *', timezone: 'Europe/Berlin' }, 300, NOW).errors).toEqual([]);
    const field = (input: { cron: string; timezone?: string }) =>
      checkSchedule(input, 300, NOW).errors.map((e) => e.field + ' ' + e.message);
    expect(field({ cron: '* * * * *' })).toEqual(['schedule.cron runs more often than every 300 s (MONITOR_MIN_INTERVAL_S)']);
    expect(field({ cron: '0,1 9 * * *' })).toEqual(['schedule.cron runs more often than every 300 s (MONITOR_MIN_INTERVAL_S)']);
    expect(field({ cron: '0 0 9 * * *' })).toEqual(['schedule.cron must have five fields (minute hour day-of-month month day-of-week)']);
    expect(field({ cron: '0 99 * * *' })).toEqual(['schedule.cron is not a valid cron expression']);
    expect(field({ cron: '0 9 * * *', timezone: 'Mars/Olympus' })).toEqual(['schedule.timezone must be an IANA time zone']);
  });
});

describe('checkSchedule around changes of the UTC offset', () => {
  const TOO_OFTEN = 'schedule.cron runs more often than every 300 s (MONITOR_MIN_INTERVAL_S)';
  const problems = (cron: string, timezone: string, now: string, minIntervalS = 300) =>
    checkSchedule({ cron, timezone }, minIntervalS, new Date(now)).errors.map((e) => e.field + ' ' + e.message);

  it('refuses runs that come too close only where the clock goes back (the hour is run twice)', () => {
    // 01:58 EDT (05:58Z) then 01:00 EST (06:00Z) on 2026-11-01; 58 min apart on every other day.
    expect(problems('0,58 1 * * *', 'America/New_York', '2026-10-01T00:00:00Z')).toEqual([TOO_OFTEN]);
    expect(problems('0,58 1 * * *', 'America/New_York', '2026-10-01T00:00:00Z', 120)).toEqual([]);
    expect(problems('0,58 1 * * *', 'UTC', '2026-10-01T00:00:00Z')).toEqual([]);
    // 01:58 BST (00:58Z) then 01:00 GMT (01:00Z) on 2026-10-25.
    expect(problems('0,58 1 * * *', 'Europe/London', '2026-10-01T00:00:00Z')).toEqual([TOO_OFTEN]);
  });

  it('refuses runs that come too close only where the clock goes forward (the hour is skipped)', () => {
    // 01:58 EST (06:58Z) then 03:00 EDT (07:00Z) on 2027-03-14; 62 min apart on every other day.
    expect(problems('0,58 1,3 * * *', 'America/New_York', '2027-01-15T00:00:00Z')).toEqual([TOO_OFTEN]);
    // 00:58 GMT (00:58Z) then 02:00 BST (01:00Z) on 2027-03-28.
    expect(problems('0,58 0,2 * * *', 'Europe/London', '2027-01-15T00:00:00Z')).toEqual([TOO_OFTEN]);
    expect(problems('0,58 0,2 * * *', 'Asia/Tokyo', '2027-01-15T00:00:00Z')).toEqual([]);
  });

  it('takes runs that stay far enough apart across the changes, and sees a 23 h day', () => {
    expect(problems('*/5 * * * *', 'America/New_York', '2026-10-01T00:00:00Z')).toEqual([]);
    expect(problems('*/5 * * * *', 'Europe/London', '2027-01-15T00:00:00Z')).toEqual([]);
    // A fixed time in the skipped hour runs at its end (03:00 EDT); the gaps are 23.5 h and 24.5 h.
    expect(problems('30 2 * * *', 'America/New_York', '2027-01-15T00:00:00Z')).toEqual([]);
    expect(problems('0 12 * * *', 'America/New_York', '2027-01-15T00:00:00Z', 86_400)).toEqual([
      'schedule.cron runs more often than every 86400 s (MONITOR_MIN_INTERVAL_S)',
    ]);
    expect(problems('0 12 * * *', 'UTC', '2027-01-15T00:00:00Z', 86_400)).toEqual([]);
  });

  it("refuses a day's last run too close to the next day's first only when two days in a row match", () => {
    expect(problems('0,58 0,23 * * *', 'UTC', '2026-11-25T00:00:00Z')).toEqual([TOO_OFTEN]);
    expect(problems('0,58 0,23 1 * *', 'UTC', '2026-11-25T00:00:00Z')).toEqual([]);
    expect(problems('0,58 0,23 1,L * *', 'UTC', '2026-11-25T00:00:00Z')).toEqual([TOO_OFTEN]);
    expect(problems('0 0 30 2 *', 'UTC', '2026-11-25T00:00:00Z')).toEqual(['schedule.cron never runs']);
  });

  it("agrees with every consecutive pair of the scheduler's own runs over the year ahead", () => {
    const now = new Date('2026-09-20T10:00:00Z');
    const yearAhead = now.getTime() + 366 * 86_400_000;
    // Months with changes in these zones only, to keep the reference walk short.
    for (const timezone of ['America/New_York', 'Australia/Lord_Howe', 'America/Santiago']) {
      for (const cron of ['0,58 1 * 3,4,9-11 *', '0,58 1,3 * 3,4,9-11 *', '0,30 0-4 * 3,4,9-11 0', '45 1,2 * 3,4,9-11 *']) {
        const runs: Date[] = [];
        for (const run of new Cron(cron, { timezone, paused: true }).enumerate(now)) {
          if (run.getTime() > yearAhead) break;
          runs.push(run);
        }
        for (const minIntervalS of [300, 5400]) {
          const tooClose = runs.some((run, i) => i > 0 && run.getTime() - runs[i - 1].getTime() < minIntervalS * 1000);
          const refused = checkSchedule({ cron, timezone }, minIntervalS, now).errors.length > 0;
          expect({ timezone, cron, minIntervalS, refused }).toEqual({ timezone, cron, minIntervalS, refused: tooClose });
        }
      }
    }
  });
});

describe('nextCheckAt', () => {
  it('is the next slot after now, missed slots not made up, plus up to 10 % (at most 60 s) of jitter', () => {
    expect(nextCheckAt({ intervalSeconds: 300 }, NOW, () => 0)).toEqual(new Date('2026-11-25T10:07:30.000Z'));
    expect(nextCheckAt({ intervalSeconds: 300 }, NOW, () => 0.999)!.getTime() - NOW.getTime()).toBe(300_000 + 29_970);
    expect(nextCheckAt({ intervalSeconds: 86400 }, NOW, () => 0.999)!.getTime() - NOW.getTime()).toBe(86_400_000 + 59_940);
    expect(nextCheckAt({ cron: '*/5 * * * *', timezone: 'UTC' }, NOW, () => 0)).toEqual(new Date('2026-11-25T10:05:00.000Z'));
    expect(nextCheckAt({ cron: '0 9 * * *', timezone: 'Europe/Berlin' }, NOW, () => 0)).toEqual(new Date('2026-11-26T08:00:00.000Z'));
  });
});
