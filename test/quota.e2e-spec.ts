import { getQueueToken } from '@nestjs/bull';
import type { Queue } from 'bull';
import { DataSource } from 'typeorm';
import { AccountsService } from '../src/accounts/accounts.service';
import { ApiKeysService } from '../src/auth/api-keys.service';
import { buildAdminProgram } from '../src/cli/admin-commands';
import { Clock } from '../src/common/clock';
import { CAPTURE_QUEUE } from '../src/queue/queues';
import { QuotaService } from '../src/quota/quota.service';
import { FakeClock } from './support/fake-clock';
import { startTestApp, TestApp } from './support/test-app';

/** Jobs are accepted and counted, never captured: processors are off, so no Chromium load. */
describe('monthly quotas', () => {
  const clock = new FakeClock('2026-03-14T10:00:00.000Z');
  let t: TestApp;
  let db: DataSource;
  const body = { url: 'http://127.0.0.1:9/quota' };

  beforeAll(async () => {
    t = await startTestApp({
      runProcessors: false,
      env: { LEGACY_FREE_CAP: '7' },
      override: (b) => b.overrideProvider(Clock).useValue(clock),
    });
    db = t.get(DataSource);
  });

  afterAll(async () => {
    await t.close();
  });

  beforeEach(() => clock.set('2026-03-14T10:00:00.000Z'));

  /** Sets a key's usage for the month of `month` (`YYYY-MM-01`) directly. */
  async function setUsage(keyId: string, used: number, month = '2026-03-01') {
    await db.query(
      `INSERT INTO quota_usage (api_key_id, month, used) VALUES ($1, $2, $3)
       ON CONFLICT (api_key_id, month) DO UPDATE SET used = EXCLUDED.used`,
      [keyId, month, used],
    );
  }

  async function usage(keyId: string, month = '2026-03-01'): Promise<number> {
    const rows = await db.query(`SELECT used FROM quota_usage WHERE api_key_id = $1 AND month = $2`, [keyId, month]);
    return rows.length ? rows[0].used : 0;
  }

  async function jobCount(keyId: string): Promise<number> {
    const [{ count }] = await db.query(`SELECT COUNT(*)::int AS count FROM screenshot_jobs WHERE api_key_id = $1`, [keyId]);
    return count;
  }

  it('accepts exactly the 20 screenshots left out of 200 concurrent requests, and enqueues nothing for the rest', async () => {
    const { key, keyId } = await t.createKey('free');
    await setUsage(keyId, 80);
    const responses = await Promise.all(Array.from({ length: 200 }, () => t.request('POST', '/v1/screenshot', { key, body })));
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 202)).toHaveLength(20);
    expect(statuses.filter((s) => s === 429)).toHaveLength(180);
    expect(await usage(keyId)).toBe(100);
    expect(await jobCount(keyId)).toBe(20);
    const queue = t.get<Queue>(getQueueToken(CAPTURE_QUEUE));
    const accepted = responses.filter((r) => r.status === 202).map((r) => r.body.id);
    const queued = await Promise.all(accepted.map((id) => queue.getJob(id)));
    expect(queued.every(Boolean)).toBe(true);
    expect(new Set(accepted).size).toBe(20);
  });

  it('answers 429 PLAN_QUOTA_EXCEEDED with Retry-After and details { used, limit, plan, resetAt }', async () => {
    const { key, keyId } = await t.createKey('free');
    await setUsage(keyId, 100);
    const res = await t.request('POST', '/v1/screenshot', { key, body });
    expect(res.status).toBe(429);
    expect(res.body).toEqual({
      error: expect.any(String),
      code: 'PLAN_QUOTA_EXCEEDED',
      requestId: res.headers.get('x-request-id'),
      details: { used: 100, limit: 100, plan: 'free', resetAt: '2026-04-01T00:00:00.000Z' },
    });
    // 2026-03-14T10:00:00Z → 2026-04-01T00:00:00Z
    expect(res.headers.get('retry-after')).toBe(String(17 * 86400 + 14 * 3600));
    expect(await usage(keyId)).toBe(100);
    expect(await jobCount(keyId)).toBe(0);
  });

  it('applies each plan cap, legacy_free from LEGACY_FREE_CAP', async () => {
    for (const [plan, cap] of [['free', 100], ['starter', 2000], ['pro', 10000], ['legacy_free', 7]] as const) {
      const { key, keyId } = await t.createKey(plan);
      await setUsage(keyId, cap - 1);
      expect((await t.request('POST', '/v1/screenshot', { key, body })).status).toBe(202);
      const over = await t.request('POST', '/v1/screenshot', { key, body });
      expect(over.status).toBe(429);
      expect(over.body.details).toMatchObject({ used: cap, limit: cap, plan });
    }
  });

  it('applies a plan change at once', async () => {
    const { key, keyId, accountId } = await t.createKey('free');
    await setUsage(keyId, 100);
    expect((await t.request('POST', '/v1/screenshot', { key, body })).status).toBe(429);
    await t.get(AccountsService).changePlan(accountId, 'starter');
    expect((await t.request('POST', '/v1/screenshot', { key, body })).status).toBe(202);
    await t.get(AccountsService).changePlan(accountId, 'free');
    const res = await t.request('POST', '/v1/screenshot', { key, body });
    expect(res.status).toBe(429);
    expect(res.body.details).toMatchObject({ used: 101, limit: 100, plan: 'free' });
  });

  it('counts usage per key, not per account', async () => {
    const first = await t.createKey('free');
    await setUsage(first.keyId, 100);
    const other = await t.get(ApiKeysService).create(first.accountId, 'second');
    expect((await t.request('POST', '/v1/screenshot', { key: first.key, body })).status).toBe(429);
    expect((await t.request('POST', '/v1/screenshot', { key: other.key, body })).status).toBe(202);
    expect(await usage(other.id)).toBe(1);
  });

  it('counts nothing for a request that fails validation or cannot be enqueued', async () => {
    const { key, keyId } = await t.createKey('free');
    await setUsage(keyId, 10);
    expect((await t.request('POST', '/v1/screenshot', { key, body: { url: 'ftp://example.com' } })).status).toBe(400);
    const queue = t.get<Queue>(getQueueToken(CAPTURE_QUEUE));
    const add = jest.spyOn(queue, 'add').mockRejectedValueOnce(new Error('Redis unavailable'));
    try {
      const res = await t.request('POST', '/v1/screenshot', { key, body });
      expect(res.status).toBe(500);
      expect(res.body.code).toBe('INTERNAL_ERROR');
    } finally {
      add.mockRestore();
    }
    expect(await usage(keyId)).toBe(10);
    expect(await jobCount(keyId)).toBe(0);
  });

  it('reports the status of a key: plan, limit, used, remaining, resetAt', async () => {
    const { keyId } = await t.createKey('legacy_free');
    await setUsage(keyId, 9);
    expect(await t.get(QuotaService).status({ apiKeyId: keyId, plan: 'legacy_free' })).toEqual({
      plan: 'legacy_free',
      limit: 7,
      used: 9,
      remaining: 0,
      resetAt: new Date('2026-04-01T00:00:00.000Z'),
    });
  });

  it('lists usedThisMonth per key in the CLI key:list', async () => {
    const { key, keyId, accountId } = await t.createKey('free');
    await setUsage(keyId, 5, '2026-02-01');
    await t.request('POST', '/v1/screenshot', { key, body });
    await t.request('POST', '/v1/screenshot', { key, body });
    const printed: any[] = [];
    const program = buildAdminProgram(async () => t.app, () => (json) => printed.push(json));
    await program.parseAsync(['node', 'glimpse', '--json', 'key:list', '--account', accountId]);
    expect(printed).toEqual([{ data: [expect.objectContaining({ id: keyId, usedThisMonth: 2 })] }]);
  });
});
