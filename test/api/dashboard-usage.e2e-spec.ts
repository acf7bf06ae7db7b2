import { DataSource } from 'typeorm';
import type { UserView } from '../../src/accounts/users.service';
import { ApiKeysService } from '../../src/auth/api-keys.service';
import { DashboardService } from '../../src/dashboard/dashboard.service';
import { pgPool } from '../../src/sql/sql';
import { utcMonthOf } from '../../src/common/utc-month';
import { startTestApp, TestApp } from '../support/test-app';

/** The dashboard's key list reads this month's usage of all the account's keys at once (docs/dashboard.md). */
describe('dashboard: usage of every key', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ runProcessors: false });
  });

  afterAll(async () => {
    await t?.close();
  });

  it('lists each key with its own usage, from one usage query however many keys the account has', async () => {
    const { accountId, keyId } = await t.createKey('pro');
    const keys = t.get(ApiKeysService);
    const others = [];
    for (let i = 0; i < 5; i++) others.push(await keys.create(accountId, `key ${i}`));
    const db = t.get(DataSource);
    const { month } = utcMonthOf(new Date());
    await db.query(`INSERT INTO quota_usage (api_key_id, month, used) VALUES ($1, $2, 7), ($3, $2, 3)`, [keyId, month, others[2].id]);

    const pool = pgPool(db);
    const query = jest.spyOn(pool, 'query');
    try {
      const rows = await t.get(DashboardService).keys({ accountId } as UserView);
      const usageQueries = query.mock.calls.filter(([q]) => /quota_usage/.test(typeof q === 'string' ? q : (q as { text: string }).text));
      expect(usageQueries).toHaveLength(1);
      expect(rows.map((r) => [r.id, r.used])).toEqual([[keyId, 7], ...others.map((k, i) => [k.id, i === 2 ? 3 : 0])]);
      expect(rows.every((r) => r.limit === rows[0].limit && r.remaining === r.limit - r.used)).toBe(true);
    } finally {
      query.mockRestore();
    }
  });
});
