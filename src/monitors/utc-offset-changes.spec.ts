import { upcomingUtcOffsetChanges, UtcOffsetChange, utcOffsetChanges, utcOffsetMs } from './utc-offset-changes';

const FROM = Date.parse('2026-07-01T00:00:00.000Z');
const YEAR_MS = 366 * 86_400_000;
const iso = (changes: UtcOffsetChange[]) => changes.map((change) => new Date(change.atMs).toISOString());

describe('utcOffsetMs', () => {
  it("is the zone's wall clock minus UTC", () => {
    expect(utcOffsetMs('America/New_York', Date.parse('2026-01-15T12:00:00.000Z'))).toBe(-5 * 3_600_000);
    expect(utcOffsetMs('America/New_York', Date.parse('2026-07-15T12:00:00.000Z'))).toBe(-4 * 3_600_000);
    expect(utcOffsetMs('Asia/Kolkata', Date.parse('2026-07-15T12:00:00.500Z'))).toBe(5.5 * 3_600_000);
    expect(utcOffsetMs('UTC', FROM)).toBe(0);
  });
});

describe('utcOffsetChanges', () => {
  it('finds each daylight-saving change of a year to the second', () => {
    expect(iso(utcOffsetChanges('America/New_York', FROM, FROM + YEAR_MS))).toEqual([
      '2026-11-01T06:00:00.000Z',
      '2027-03-14T07:00:00.000Z',
    ]);
    expect(iso(utcOffsetChanges('Europe/London', FROM, FROM + YEAR_MS))).toEqual(['2026-10-25T01:00:00.000Z', '2027-03-28T01:00:00.000Z']);
    // Half-hour change: 02:00 → 01:30 in April, 02:00 → 02:30 in October.
    expect(iso(utcOffsetChanges('Australia/Lord_Howe', FROM, FROM + YEAR_MS))).toEqual([
      '2026-10-03T15:30:00.000Z',
      '2027-04-03T15:00:00.000Z',
    ]);
  });

  it('finds none in a zone without changes, and only those inside the range', () => {
    expect(utcOffsetChanges('Asia/Tokyo', FROM, FROM + YEAR_MS)).toEqual([]);
    expect(utcOffsetChanges('UTC', FROM, FROM + YEAR_MS)).toEqual([]);
    expect(iso(utcOffsetChanges('America/New_York', FROM, Date.parse('2026-11-01T06:00:00.000Z')))).toEqual(['2026-11-01T06:00:00.000Z']);
    expect(utcOffsetChanges('America/New_York', FROM, Date.parse('2026-11-01T05:59:59.000Z'))).toEqual([]);
  });

  it('gives the offsets on either side, ms', () => {
    expect(utcOffsetChanges('America/New_York', FROM, FROM + YEAR_MS)[0]).toEqual({
      atMs: Date.parse('2026-11-01T06:00:00.000Z'),
      beforeMs: -4 * 3_600_000,
      afterMs: -5 * 3_600_000,
    });
  });

  it('answers later calls from the cache while it covers their span, with the same changes', () => {
    const later = Date.parse('2027-02-01T00:00:00.000Z');
    expect(iso(upcomingUtcOffsetChanges('Europe/London', FROM, YEAR_MS))).toEqual(['2026-10-25T01:00:00.000Z', '2027-03-28T01:00:00.000Z']);
    expect(iso(upcomingUtcOffsetChanges('Europe/London', later, YEAR_MS))).toEqual([
      '2027-03-28T01:00:00.000Z',
      '2027-10-31T01:00:00.000Z',
    ]);
    expect(iso(upcomingUtcOffsetChanges('Europe/London', later + 2 * YEAR_MS, YEAR_MS))).toEqual(
      iso(utcOffsetChanges('Europe/London', later + 2 * YEAR_MS, later + 3 * YEAR_MS)),
    );
  });
});
