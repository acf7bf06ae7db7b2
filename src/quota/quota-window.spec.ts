import { monthlyCap } from '../accounts/plan';
import { secondsUntil, unixSeconds, utcMonthOf } from '../common/utc-month';
import { reachedThresholds, thresholdUsage } from './quota-window';

describe('quota window', () => {
  it('is the calendar month in UTC, resetting on the 1st of the next month at 00:00 UTC', () => {
    expect(utcMonthOf(new Date('2026-03-15T12:00:00.000Z'))).toEqual({
      month: '2026-03-01',
      resetAt: new Date('2026-04-01T00:00:00.000Z'),
    });
    // The last millisecond of a month still belongs to it; the next one starts the new month.
    expect(utcMonthOf(new Date('2026-01-31T23:59:59.999Z')).month).toBe('2026-01-01');
    expect(utcMonthOf(new Date('2026-02-01T00:00:00.000Z')).month).toBe('2026-02-01');
  });

  it('rolls over across a year end', () => {
    expect(utcMonthOf(new Date('2026-12-31T23:59:59.999Z'))).toEqual({
      month: '2026-12-01',
      resetAt: new Date('2027-01-01T00:00:00.000Z'),
    });
    expect(utcMonthOf(new Date('2027-01-01T00:00:00.000Z'))).toEqual({
      month: '2027-01-01',
      resetAt: new Date('2027-02-01T00:00:00.000Z'),
    });
  });

  it('ignores the local time zone: a moment that is already the next day in UTC+14 stays in its UTC month', () => {
    expect(utcMonthOf(new Date('2026-04-30T20:00:00-10:00')).month).toBe('2026-05-01');
    expect(utcMonthOf(new Date('2026-05-01T09:00:00+14:00')).month).toBe('2026-04-01');
  });

  it('counts seconds until the reset rounded up, never 0', () => {
    const reset = new Date('2026-02-01T00:00:00.000Z');
    expect(secondsUntil(reset, new Date('2026-01-31T23:59:59.999Z'))).toBe(1);
    expect(secondsUntil(reset, new Date('2026-01-31T23:59:00.000Z'))).toBe(60);
    expect(secondsUntil(reset, new Date('2026-01-01T00:00:00.000Z'))).toBe(31 * 86400);
    expect(unixSeconds(reset)).toBe(1769904000);
  });

  it('reaches 80% and 95% at the rounded-up usage', () => {
    expect(thresholdUsage(100, 80)).toBe(80);
    expect(thresholdUsage(100, 95)).toBe(95);
    expect(thresholdUsage(2000, 95)).toBe(1900);
    expect(thresholdUsage(7, 80)).toBe(6);
    expect(thresholdUsage(7, 95)).toBe(7);
    expect(reachedThresholds(79, 100)).toEqual([]);
    expect(reachedThresholds(80, 100)).toEqual([80]);
    expect(reachedThresholds(95, 100)).toEqual([80, 95]);
    expect(reachedThresholds(0, 0)).toEqual([]);
  });
});

describe('monthly caps', () => {
  it('are 100, 2,000 and 10,000, and LEGACY_FREE_CAP for legacy_free', () => {
    expect(monthlyCap('free', 1000)).toBe(100);
    expect(monthlyCap('starter', 1000)).toBe(2000);
    expect(monthlyCap('pro', 1000)).toBe(10000);
    expect(monthlyCap('legacy_free', 1000)).toBe(1000);
    expect(monthlyCap('legacy_free', 250)).toBe(250);
  });
});
