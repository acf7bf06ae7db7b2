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

describe('nextCheckAt', () => {
  it('is the next slot after now, missed slots not made up, plus up to 10 % (at most 60 s) of jitter', () => {
    expect(nextCheckAt({ intervalSeconds: 300 }, NOW, () => 0)).toEqual(new Date('2026-11-25T10:07:30.000Z'));
    expect(nextCheckAt({ intervalSeconds: 300 }, NOW, () => 0.999)!.getTime() - NOW.getTime()).toBe(300_000 + 29_970);
    expect(nextCheckAt({ intervalSeconds: 86400 }, NOW, () => 0.999)!.getTime() - NOW.getTime()).toBe(86_400_000 + 59_940);
    expect(nextCheckAt({ cron: '*/5 * * * *', timezone: 'UTC' }, NOW, () => 0)).toEqual(new Date('2026-11-25T10:05:00.000Z'));
    expect(nextCheckAt({ cron: '0 9 * * *', timezone: 'Europe/Berlin' }, NOW, () => 0)).toEqual(new Date('2026-11-26T08:00:00.000Z'));
  });
});
