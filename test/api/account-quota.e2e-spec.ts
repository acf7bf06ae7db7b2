import { DataSource } from 'typeorm';
import { AccountsService } from '../../src/accounts/accounts.service';
import { UsersService } from '../../src/accounts/users.service';
import { ApiKeysService } from '../../src/auth/api-keys.service';
import { utcMonthOf } from '../../src/common/utc-month';
import { postForm, sessionCookieOf } from '../support/dashboard-forms';
import { startTestApp, TestApp } from '../support/test-app';

const PASSWORD = 'correct horse battery staple';

/**
 * CONTRACT.md, "Quotas" (the account ceiling): in one month an account's keys together, revoked ones
 * included, accept at most the plan's cap × its active-key limit (free 100 × 2). Jobs are accepted and
 * counted, never captured: processors are off.
 */
describe('account quota ceiling', () => {
  let t: TestApp;
  /** A second app on the same database: its acceptances run in their own transactions, as another API process's would. */
  let other: TestApp;
  let db: DataSource;
  const body = { url: 'http://127.0.0.1:9/account-quota' };
  const batch = (n: number) => ({ items: Array.from({ length: n }, () => body) });
  const resetAt = () => utcMonthOf(new Date()).resetAt.toISOString();

  beforeAll(async () => {
    t = await startTestApp({ runProcessors: false });
    other = await startTestApp({ runProcessors: false });
    db = t.get(DataSource);
  });

  afterAll(async () => {
    await other?.close();
    await t?.close();
  });

  /** Every job row of the account, and every screenshot counted for its keys this month. */
  async function counted(accountId: string): Promise<{ jobs: number; used: number }> {
    const [{ jobs }] = await db.query(`SELECT count(*)::int AS jobs FROM screenshot_jobs WHERE account_id = $1`, [accountId]);
    const [{ used }] = await db.query(
      `SELECT COALESCE(sum(u.used), 0)::int AS used FROM quota_usage u JOIN api_keys k ON k.id = u.api_key_id
        WHERE k.account_id = $1 AND u.month = $2::date`,
      [accountId, utcMonthOf(new Date()).month],
    );
    return { jobs, used };
  }

  /** A key of the account that has already accepted `spent` screenshots through the API (one batch). */
  async function spentKey(accountId: string, spent: number): Promise<{ key: string; id: string }> {
    const created = await t.get(ApiKeysService).create(accountId, `spent ${spent}`);
    if (spent) expect((await t.request('POST', '/v1/screenshot/batch', { key: created.key, body: batch(spent) })).status).toBe(202);
    return created;
  }

  it('two free keys spend 100 each and are revoked: a third key is refused with 429 scope "account", nothing counted', async () => {
    const account = await t.get(AccountsService).create(`ceiling-${Date.now()}@test.local`, 'free');
    for (const spent of [await spentKey(account.id, 100), await spentKey(account.id, 100)]) {
      await t.get(ApiKeysService).revoke(spent.id);
    }
    const third = await t.get(ApiKeysService).create(account.id, 'third', { withinPlan: true });
    for (const request of [
      { path: '/v1/screenshot', body },
      { path: '/v1/screenshot/batch', body: batch(1) },
    ]) {
      const refused = await t.request('POST', request.path, { key: third.key, body: request.body });
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual({
        error: expect.any(String),
        code: 'PLAN_QUOTA_EXCEEDED',
        requestId: refused.headers.get('x-request-id'),
        details: { scope: 'account', used: 200, limit: 200, plan: 'free', resetAt: resetAt() },
      });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      // The headers stay the key's own: nothing of its 100 was used.
      expect(refused.headers.get('x-ratelimit-limit')).toBe('100');
      expect(refused.headers.get('x-ratelimit-remaining')).toBe('100');
    }
    expect(await counted(account.id)).toEqual({ jobs: 200, used: 200 });
  });

  it('the per-key refusal says scope "key"', async () => {
    const account = await t.get(AccountsService).create(`key-scope-${Date.now()}@test.local`, 'free');
    const spent = await spentKey(account.id, 100);
    const refused = await t.request('POST', '/v1/screenshot', { key: spent.key, body });
    expect(refused.status).toBe(429);
    expect(refused.body.details).toEqual({ scope: 'key', used: 100, limit: 100, plan: 'free', resetAt: resetAt() });
  });

  it('follows a plan change at once', async () => {
    const account = await t.get(AccountsService).create(`plan-${Date.now()}@test.local`, 'free');
    const first = await spentKey(account.id, 100);
    await t.get(ApiKeysService).revoke(first.id);
    const second = await spentKey(account.id, 100);
    await t.get(ApiKeysService).revoke(second.id);
    const third = await spentKey(account.id, 0);
    expect((await t.request('POST', '/v1/screenshot', { key: third.key, body })).status).toBe(429);
    await t.get(AccountsService).changePlan(account.id, 'starter');
    expect((await t.request('POST', '/v1/screenshot', { key: third.key, body })).status).toBe(202);
    await t.get(AccountsService).changePlan(account.id, 'free');
    const refused = await t.request('POST', '/v1/screenshot', { key: third.key, body });
    expect(refused.body.details).toMatchObject({ scope: 'account', used: 201, limit: 200 });
  });

  it('concurrent acceptances of two keys near the ceiling, through two API processes, never accept past it', async () => {
    const account = await t.get(AccountsService).create(`race-${Date.now()}@test.local`, 'free');
    const revoked = await spentKey(account.id, 100);
    await t.get(ApiKeysService).revoke(revoked.id);
    const a = await spentKey(account.id, 40);
    const b = await spentKey(account.id, 40);
    // 180 of 200 used: 20 left for the account, while each key has 60 left of its own.
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => [
        t.request('POST', '/v1/screenshot', { key: a.key, body }),
        other.request('POST', '/v1/screenshot', { key: b.key, body }),
        (i % 2 ? t : other).request('POST', '/v1/screenshot/batch', { key: i % 2 ? b.key : a.key, body: batch(2) }),
      ]).flat(),
    );
    const accepted = answers.filter((r) => r.status === 202);
    const refused = answers.filter((r) => r.status === 429);
    expect(accepted.length + refused.length).toBe(answers.length);
    expect(refused.every((r) => r.body.details.scope === 'account')).toBe(true);
    const acceptedScreenshots = accepted.reduce((n, r) => n + (Array.isArray(r.body.data) ? r.body.data.length : 1), 0);
    expect(acceptedScreenshots).toBe(20);
    expect(await counted(account.id)).toEqual({ jobs: 200, used: 200 });
    const [{ used }] = await db.query(`SELECT used FROM account_quota_usage WHERE account_id = $1`, [account.id]);
    expect(used).toBe(200);
  });

  it('the dashboard overview shows the account usage against its ceiling, revoked keys included', async () => {
    const email = `overview-${Date.now()}@test.local`;
    await t.get(UsersService).signUp(email, PASSWORD);
    const account = await t.get(AccountsService).get(email);
    const revoked = await spentKey(account.id, 100);
    await t.get(ApiKeysService).revoke(revoked.id);
    await spentKey(account.id, 30);
    const signedIn = await postForm(t.baseUrl, '/dashboard/login', { email, password: PASSWORD }, '127.0.6.1');
    const cookie = sessionCookieOf(signedIn)!;
    expect(cookie).not.toBeNull();
    const page = await (await fetch(`${t.baseUrl}/dashboard`, { headers: { cookie } })).text();
    expect(/data-testid="used-total">([^<]+)</.exec(page)?.[1]).toBe('130');
    expect(/data-testid="account-ceiling">([^<]+)</.exec(page)?.[1]).toBe('200');
    expect(page).toContain('<strong>70</strong> of the account');
  });
});
