import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Browser } from 'playwright';
import { AccountsService } from '../../src/accounts/accounts.service';
import { UsersService } from '../../src/accounts/users.service';
import { ApiKeysService } from '../../src/auth/api-keys.service';
import { launchTestBrowser, seriousAxeViolations } from '../support/test-browser';
import { startTestApp, TestApp } from '../support/test-app';

/** Where the 1280×800 PNGs go (look at them), as in dashboard.e2e-spec.ts. */
const SCREENSHOT_DIR = process.env.DASHBOARD_SCREENSHOT_DIR ?? join(tmpdir(), 'glimpse-dashboard-screenshots');
const PASSWORD = 'correct horse battery staple';

/**
 * The Overview shows the account's usage against its ceiling (CONTRACT.md "Quotas", docs/dashboard.md),
 * seen in Chromium as a person would: signed up, signed in, with a spent and revoked key and an active one.
 * Jobs are accepted, never captured (processors off).
 */
describe('dashboard: the account ceiling on the Overview', () => {
  let t: TestApp;
  let browser: Browser;

  beforeAll(async () => {
    mkdirSync(SCREENSHOT_DIR, { recursive: true });
    t = await startTestApp({ runProcessors: false, env: { DASHBOARD_SIGNUP: 'true' } });
    browser = await launchTestBrowser(t.config);
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('after sign-up and sign-in, shows 130 of 200 used with 70 left, the revoked key still counted', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, baseURL: t.baseUrl });
    const page = await context.newPage();
    const email = `ceiling-${Date.now()}@test.local`;
    await page.goto('/dashboard/signup');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.waitForURL('**/dashboard/login?signed-up=1');
    expect(await page.getByTestId('signed-up').textContent()).toContain('Sign in with your email and password');
    expect((await context.cookies()).find((c) => c.name === 'glimpse_session')).toBeUndefined();
    await page.screenshot({ path: join(SCREENSHOT_DIR, '15b-signed-up.png'), caret: 'initial' });
    expect(await seriousAxeViolations(page)).toEqual([]);

    const account = await t.get(AccountsService).get(email);
    expect(await t.get(UsersService).findByEmail(email)).not.toBeNull();
    const keys = t.get(ApiKeysService);
    const spent = await keys.create(account.id, 'old laptop');
    const batch = (n: number) => ({ items: Array.from({ length: n }, () => ({ url: 'http://127.0.0.1:9/ceiling' })) });
    expect((await t.request('POST', '/v1/screenshot/batch', { key: spent.key, body: batch(100) })).status).toBe(202);
    await keys.revoke(spent.id);
    const active = await keys.create(account.id, 'production');
    expect((await t.request('POST', '/v1/screenshot/batch', { key: active.key, body: batch(30) })).status).toBe(202);

    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL('**/dashboard');
    expect(await page.getByTestId('used-total').textContent()).toBe('130');
    expect(await page.getByTestId('account-ceiling').textContent()).toBe('200');
    expect(await page.getByTestId('account-usage').textContent()).toContain('70 of the account’s 200 screenshots left this month');
    expect(await page.locator(`tr[data-key-id="${spent.id}"]`).textContent()).toContain('Revoked');
    await page.waitForLoadState('networkidle');
    await page.screenshot({ path: join(SCREENSHOT_DIR, '04b-overview-account-ceiling.png'), caret: 'initial', fullPage: true });
    expect(await seriousAxeViolations(page)).toEqual([]);
    await context.close();
  });
});
