import { getQueueToken } from '@nestjs/bull';
import type { Queue } from 'bull';
import { DataSource } from 'typeorm';
import { AccountsService } from '../../src/accounts/accounts.service';
import { ApiKeysService } from '../../src/auth/api-keys.service';
import { buildAdminProgram } from '../../src/cli/admin-commands';
import { Clock } from '../../src/common/clock';
import { DurableQueueService } from '../../src/queue/durable-queue.service';
import { CAPTURE_QUEUE } from '../../src/queue/queues';
import { QuotaService } from '../../src/quota/quota.service';
import { FakeClock } from '../support/fake-clock';
import { startTestApp, TestApp } from '../support/test-app';

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
      details: { scope: 'key', used: 100, limit: 100, plan: 'free', resetAt: '2026-04-01T00:00:00.000Z' },
    });
    // 2026-03-14T10:00:00Z → 2026-04-01T00:00:00Z
    expect(res.headers.get('retry-after')).toBe(String(17 * 86400 + 14 * 3600));
    expect(await usage(keyId)).toBe(100);
    expect(await jobCount(keyId)).toBe(0);
  });

  it('applies each plan cap, legacy_free from LEGACY_FREE_CAP', async () => {
    for (const [plan, cap] of [
      ['free', 100],
      ['starter', 2000],
      ['pro', 10000],
      ['legacy_free', 7],
    ] as const) {
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

  it('counts nothing for a request that fails validation', async () => {
    const { key, keyId } = await t.createKey('free');
    await setUsage(keyId, 10);
    expect((await t.request('POST', '/v1/screenshot', { key, body: { url: 'ftp://example.com' } })).status).toBe(400);
    expect(await usage(keyId)).toBe(10);
    expect(await jobCount(keyId)).toBe(0);
  });

  it('accepts and counts once a job the queue refuses; the reconciler queues it (CONTRACT.md, Durability)', async () => {
    const { key, keyId } = await t.createKey('free');
    await setUsage(keyId, 10);
    const queue = t.get<Queue>(getQueueToken(CAPTURE_QUEUE));
    const add = jest.spyOn(queue, 'add').mockRejectedValueOnce(new Error('Redis unavailable'));
    let id: string;
    try {
      const res = await t.request('POST', '/v1/screenshot', { key, body });
      expect(res.status).toBe(202);
      id = res.body.id;
    } finally {
      add.mockRestore();
    }
    expect(await usage(keyId)).toBe(11);
    expect(await jobCount(keyId)).toBe(1);
    expect(await queue.getJob(id)).toBeNull();
    const pass = await t.get(DurableQueueService).reconcile();
    expect(pass.ran).toBe(true);
    expect(pass.requeued['screenshot job']).toBeGreaterThanOrEqual(1);
    expect(await queue.getJob(id)).not.toBeNull();
    expect(await usage(keyId)).toBe(11);
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

  describe('X-RateLimit-* headers', () => {
    const resetMarch = String(Date.UTC(2026, 3, 1) / 1000);

    function rateLimit(res: { headers: Headers }) {
      return {
        limit: res.headers.get('x-ratelimit-limit'),
        remaining: res.headers.get('x-ratelimit-remaining'),
        reset: res.headers.get('x-ratelimit-reset'),
        policy: res.headers.get('x-ratelimit-policy'),
      };
    }

    it('are on 202, 200, 400 and 404 answers to an authenticated request, counting an accepted job at once', async () => {
      const { key } = await t.createKey('free');
      const accepted = await t.request('POST', '/v1/screenshot', { key, body });
      expect(accepted.status).toBe(202);
      expect(rateLimit(accepted)).toEqual({ limit: '100', remaining: '99', reset: resetMarch, policy: null });

      const polled = await t.request('GET', `/v1/screenshot/${accepted.body.id}`, { key });
      expect(polled.status).toBe(200);
      expect(rateLimit(polled)).toEqual({ limit: '100', remaining: '99', reset: resetMarch, policy: null });

      const invalid = await t.request('POST', '/v1/screenshot', { key, body: { url: 'https://example.com', width: 5 } });
      expect(invalid.status).toBe(400);
      expect(invalid.body.code).toBe('VALIDATION_FAILED');
      expect(rateLimit(invalid)).toEqual({ limit: '100', remaining: '99', reset: resetMarch, policy: null });

      const badIdempotencyKey = await t.request('POST', '/v1/screenshot', { key, body, headers: { 'Idempotency-Key': 'short' } });
      expect(badIdempotencyKey.status).toBe(400);
      expect(rateLimit(badIdempotencyKey).remaining).toBe('99');

      for (const id of ['scr_000000000000000000000000', 'not-an-id']) {
        const missing = await t.request('GET', `/v1/screenshot/${id}`, { key });
        expect(missing.status).toBe(404);
        expect(missing.body.code).toBe('NOT_FOUND');
        expect(rateLimit(missing)).toEqual({ limit: '100', remaining: '99', reset: resetMarch, policy: null });
      }
      for (const res of [accepted, polled, invalid]) expect(res.headers.get('retry-after')).toBeNull();
    });

    it('are on a 429, with Remaining 0 and Retry-After', async () => {
      const { key, keyId } = await t.createKey('starter');
      await setUsage(keyId, 2000);
      const res = await t.request('POST', '/v1/screenshot', { key, body });
      expect(res.status).toBe(429);
      expect(rateLimit(res)).toEqual({ limit: '2000', remaining: '0', reset: resetMarch, policy: null });
      expect(res.headers.get('retry-after')).toBe(String(Date.UTC(2026, 3, 1) / 1000 - Date.UTC(2026, 2, 14, 10) / 1000));
    });

    it('never go below 0 remaining, after a downgrade below the usage', async () => {
      const { key, keyId, accountId } = await t.createKey('pro');
      await setUsage(keyId, 150);
      await t.get(AccountsService).changePlan(accountId, 'free');
      const res = await t.request('GET', '/v1/screenshot/scr_000000000000000000000000', { key });
      expect(rateLimit(res)).toMatchObject({ limit: '100', remaining: '0' });
    });

    it('carry X-RateLimit-Policy: legacy-free-grandfathered only for legacy_free', async () => {
      const { key } = await t.createKey('legacy_free');
      const res = await t.request('POST', '/v1/screenshot', { key, body });
      expect(rateLimit(res)).toEqual({ limit: '7', remaining: '6', reset: resetMarch, policy: 'legacy-free-grandfathered' });
      const notFound = await t.request('GET', '/v1/screenshot/scr_000000000000000000000000', { key });
      expect(rateLimit(notFound).policy).toBe('legacy-free-grandfathered');
    });

    it('are absent on 401s, where no key is known', async () => {
      const { key, keyId } = await t.createKey('free');
      await t.get(ApiKeysService).revoke(keyId);
      for (const res of [
        await t.request('POST', '/v1/screenshot', { body }),
        await t.request('POST', '/v1/screenshot', { key: 'sk_live_unknownunknownunknownunknownunknown', body }),
        await t.request('GET', '/v1/screenshot/scr_000000000000000000000000', { key }),
      ]) {
        expect(res.status).toBe(401);
        expect(rateLimit(res)).toEqual({ limit: null, remaining: null, reset: null, policy: null });
        expect(res.headers.get('x-request-id')).toBeTruthy();
      }
    });
  });

  describe('at the turn of a month (injected clock)', () => {
    it('resets usage and headers at 00:00:00.000 UTC on the 1st', async () => {
      clock.set('2026-01-31T23:59:59.999Z');
      const { key, keyId } = await t.createKey('free');
      await setUsage(keyId, 100, '2026-01-01');
      const last = await t.request('POST', '/v1/screenshot', { key, body });
      expect(last.status).toBe(429);
      expect(last.headers.get('retry-after')).toBe('1');
      expect(last.headers.get('x-ratelimit-remaining')).toBe('0');
      expect(last.headers.get('x-ratelimit-reset')).toBe(String(Date.UTC(2026, 1, 1) / 1000));
      expect(last.body.details.resetAt).toBe('2026-02-01T00:00:00.000Z');

      clock.advance(1);
      const first = await t.request('POST', '/v1/screenshot', { key, body });
      expect(first.status).toBe(202);
      expect(first.headers.get('x-ratelimit-remaining')).toBe('99');
      expect(first.headers.get('x-ratelimit-reset')).toBe(String(Date.UTC(2026, 2, 1) / 1000));
      expect(await usage(keyId, '2026-01-01')).toBe(100);
      expect(await usage(keyId, '2026-02-01')).toBe(1);
    });

    it('rolls over across a year end', async () => {
      clock.set('2026-12-31T23:59:59.999Z');
      const { key, keyId } = await t.createKey('free');
      await setUsage(keyId, 95, '2026-12-01');
      const december = await t.request('GET', '/v1/screenshot/scr_000000000000000000000000', { key });
      expect(december.headers.get('x-ratelimit-remaining')).toBe('5');
      expect(december.headers.get('x-ratelimit-reset')).toBe(String(Date.UTC(2027, 0, 1) / 1000));

      clock.advance(1);
      const january = await t.request('POST', '/v1/screenshot', { key, body });
      expect(january.status).toBe(202);
      expect(january.headers.get('x-ratelimit-remaining')).toBe('99');
      expect(january.headers.get('x-ratelimit-reset')).toBe(String(Date.UTC(2027, 1, 1) / 1000));
      expect(await usage(keyId, '2027-01-01')).toBe(1);
      expect(await usage(keyId, '2026-12-01')).toBe(95);
    });
  });

  describe('quota.warning', () => {
    async function warnings(accountId: string) {
      const rows: { data: any; created_at: Date }[] = await db.query(
        `SELECT data, created_at FROM events WHERE account_id = $1 AND type = 'quota.warning' ORDER BY created_at, data->>'threshold'`,
        [accountId],
      );
      return rows.map((r) => r.data);
    }

    it('fires exactly once at 80% and once at 95% when 200 concurrent requests cross both', async () => {
      const { key, keyId, accountId } = await t.createKey('free');
      await setUsage(keyId, 79);
      const responses = await Promise.all(Array.from({ length: 200 }, () => t.request('POST', '/v1/screenshot', { key, body })));
      expect(responses.filter((r) => r.status === 202)).toHaveLength(21);
      const sent = await warnings(accountId);
      expect(sent.map((d) => d.threshold).sort()).toEqual([0.8, 0.95]);
      for (const data of sent) {
        const at = data.threshold === 0.8 ? 80 : 95;
        expect(data).toEqual({
          threshold: data.threshold,
          used: expect.any(Number),
          limit: 100,
          remaining: 100 - data.used,
          resetAt: '2026-04-01T00:00:00.000Z',
          apiKeyId: keyId,
        });
        expect(data.used).toBeGreaterThanOrEqual(at);
      }
      // Later requests, accepted or refused, do not repeat them.
      await t.request('POST', '/v1/screenshot', { key, body });
      expect(await warnings(accountId)).toHaveLength(2);
    });

    it('fires at the exact crossing, per key, and again in the next month', async () => {
      const { key, keyId, accountId } = await t.createKey('free');
      await setUsage(keyId, 78);
      expect((await t.request('POST', '/v1/screenshot', { key, body })).status).toBe(202);
      expect(await warnings(accountId)).toEqual([]);
      await t.request('POST', '/v1/screenshot', { key, body });
      expect(await warnings(accountId)).toEqual([
        { threshold: 0.8, used: 80, limit: 100, remaining: 20, resetAt: '2026-04-01T00:00:00.000Z', apiKeyId: keyId },
      ]);
      const other = await t.get(ApiKeysService).create(accountId, 'second');
      await setUsage(other.id, 79);
      await t.request('POST', '/v1/screenshot', { key: other.key, body });
      expect((await warnings(accountId)).filter((d) => d.apiKeyId === other.id)).toHaveLength(1);

      clock.set('2026-04-02T08:00:00.000Z');
      await setUsage(keyId, 79, '2026-04-01');
      await t.request('POST', '/v1/screenshot', { key, body });
      const april = (await warnings(accountId)).filter((d) => d.apiKeyId === keyId && d.resetAt === '2026-05-01T00:00:00.000Z');
      expect(april).toEqual([
        { threshold: 0.8, used: 80, limit: 100, remaining: 20, resetAt: '2026-05-01T00:00:00.000Z', apiKeyId: keyId },
      ]);
    });

    it('is stored as an event with the envelope the webhooks deliver', async () => {
      const { key, keyId, accountId } = await t.createKey('legacy_free');
      await setUsage(keyId, 6);
      await t.request('POST', '/v1/screenshot', { key, body });
      const [row] = await db.query(`SELECT id, type, created_at, data FROM events WHERE account_id = $1`, [accountId]);
      expect(row.id).toMatch(/^evt_/);
      expect(row.type).toBe('quota.warning');
      expect(row.created_at.toISOString()).toBe('2026-03-14T10:00:00.000Z');
      // LEGACY_FREE_CAP=7: 6 reached 80% (6 of 7) before this request, so this one (7) claims both thresholds.
      expect((await warnings(accountId)).map((d) => [d.threshold, d.used])).toEqual([
        [0.8, 7],
        [0.95, 7],
      ]);
    });
  });

  it('lists usedThisMonth per key in the CLI key:list', async () => {
    const { key, keyId, accountId } = await t.createKey('free');
    await setUsage(keyId, 5, '2026-02-01');
    await t.request('POST', '/v1/screenshot', { key, body });
    await t.request('POST', '/v1/screenshot', { key, body });
    const printed: any[] = [];
    const program = buildAdminProgram(
      async () => t.app,
      () => (json) => printed.push(json),
    );
    await program.parseAsync(['node', 'glimpse', '--json', 'key:list', '--account', accountId]);
    expect(printed).toEqual([{ data: [expect.objectContaining({ id: keyId, usedThisMonth: 2 })] }]);
  });
});
