import { DataSource } from 'typeorm';
import { AccountsService } from '../../src/accounts/accounts.service';
import { PLAN_LIMITS } from '../../src/accounts/plan';
import { UsersService } from '../../src/accounts/users.service';
import { ApiKeysService } from '../../src/auth/api-keys.service';
import { DashboardService } from '../../src/dashboard/dashboard.service';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * CONTRACT.md, "Organizations and plan limits": active API keys and webhook endpoints per plan
 * (2 / 10 / 50), 403 PLAN_LIMIT_REACHED with `details: { resource, limit, plan }`, operators' CLI not
 * limited; at most 10 test pings per endpoint per minute (429 RATE_LIMITED).
 */
describe('plan limits and the webhook test-ping rate', () => {
  let t: TestApp;
  const hook = (n: number | string) => ({ url: `http://127.0.0.1:9/hook-${n}` });

  beforeAll(async () => {
    t = await startTestApp({ runProcessors: false, env: { WEBHOOK_ALLOW_HTTP: 'true' } });
  });

  afterAll(async () => {
    await t?.close();
  });

  const count = async (sql: string, params: unknown[]) => (await t.get(DataSource).query(sql, params))[0].n as number;

  it('has one table of limits, with the contract’s numbers', () => {
    expect(PLAN_LIMITS).toEqual({
      api_keys: { free: 2, starter: 10, pro: 50 },
      webhook_endpoints: { free: 2, starter: 10, pro: 50 },
      render_keys: { free: 2, starter: 10, pro: 50 },
      monitors: { free: 3, starter: 50, pro: 500 },
      storage_destinations: { free: 1, starter: 5, pro: 20 },
      running_crawls: { free: 1, starter: 3, pro: 10 },
      crawl_pages: { free: 20, starter: 200, pro: 1000 },
      profiles: { free: 2, starter: 10, pro: 50 },
    });
  });

  it('webhook endpoints: the third on free is 403 PLAN_LIMIT_REACHED and creates nothing; deleting one makes room', async () => {
    const { key, accountId } = await t.createKey('free');
    const first = await t.request('POST', '/v1/webhooks', { key, body: hook(1) });
    expect(first.status).toBe(201);
    expect((await t.request('POST', '/v1/webhooks', { key, body: hook(2) })).status).toBe(201);
    const third = await t.request('POST', '/v1/webhooks', { key, body: hook(3) });
    expect(third.status).toBe(403);
    expect(third.body).toEqual({
      error: expect.stringContaining('free'),
      code: 'PLAN_LIMIT_REACHED',
      requestId: third.headers.get('x-request-id'),
      details: { resource: 'webhook_endpoints', limit: 2, plan: 'free' },
    });
    expect(await count(`SELECT count(*)::int AS n FROM webhook_endpoints WHERE account_id = $1`, [accountId])).toBe(2);
    expect((await t.request('DELETE', `/v1/webhooks/${first.body.id}`, { key })).status).toBe(204);
    expect((await t.request('POST', '/v1/webhooks', { key, body: hook(4) })).status).toBe(201);
  });

  it('webhook endpoints: of 16 concurrent creations on starter, exactly 10 are created', async () => {
    const { key, accountId } = await t.createKey('starter');
    const answers = await Promise.all(Array.from({ length: 16 }, (_, i) => t.request('POST', '/v1/webhooks', { key, body: hook(i) })));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(10);
    const refused = answers.filter((a) => a.status !== 201);
    expect(refused).toHaveLength(6);
    for (const r of refused) expect(r.body.details).toEqual({ resource: 'webhook_endpoints', limit: 10, plan: 'starter' });
    expect(await count(`SELECT count(*)::int AS n FROM webhook_endpoints WHERE account_id = $1`, [accountId])).toBe(10);
  });

  it('API keys: the dashboard creates at most the plan’s active keys (concurrently too), revoked keys do not count, the CLI is not limited', async () => {
    const email = `keys-${Math.random().toString(36).slice(2)}@test.local`;
    const account = await t.get(AccountsService).create(email, 'free');
    const user = await t.get(UsersService).create(account.id, email, 'owner');
    const dashboard = t.get(DashboardService);
    const answers = await Promise.all(Array.from({ length: 5 }, (_, i) => dashboard.createKey(user, `key ${i}`)));
    expect(answers.filter((a) => a.ok)).toHaveLength(2);
    const refused = answers.filter((a) => !a.ok);
    expect(refused).toHaveLength(3);
    for (const r of refused) expect(r).toMatchObject({ ok: false, status: 403, error: expect.stringContaining('free plan allows 2') });
    const activeKeys = `SELECT count(*)::int AS n FROM api_keys WHERE account_id = $1 AND revoked_at IS NULL`;
    expect(await count(activeKeys, [account.id])).toBe(2);

    const created = answers.find((a) => a.ok)!;
    await dashboard.revokeKey(user, (created as { value: { id: string } }).value.id);
    expect((await dashboard.createKey(user, 'after revoke')).ok).toBe(true);
    expect((await dashboard.createKey(user, 'one too many')).ok).toBe(false);

    // The operator's CLI (ApiKeysService.create without the plan check) is not limited.
    await t.get(ApiKeysService).create(account.id, 'operator');
    expect(await count(activeKeys, [account.id])).toBe(3);
  });

  it('test pings: 10 per endpoint per minute, the 11th is 429 RATE_LIMITED with Retry-After and queues nothing; another endpoint is not affected', async () => {
    const { key } = await t.createKey('pro');
    const a = (await t.request('POST', '/v1/webhooks', { key, body: hook('a') })).body.id;
    const b = (await t.request('POST', '/v1/webhooks', { key, body: hook('b') })).body.id;
    for (let i = 0; i < 10; i++) expect((await t.request('POST', `/v1/webhooks/${a}/test`, { key })).status).toBe(202);
    const limited = await t.request('POST', `/v1/webhooks/${a}/test`, { key });
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ code: 'RATE_LIMITED', details: { limit: 10, windowSeconds: 60 } });
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(await count(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1`, [a])).toBe(10);
    expect((await t.request('POST', `/v1/webhooks/${b}/test`, { key })).status).toBe(202);
  });
});
