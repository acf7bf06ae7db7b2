import { createHash } from 'node:crypto';
import { IncomingHttpHeaders, request as httpRequest } from 'node:http';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Browser, BrowserContext, Page } from 'playwright';
import { Webhook } from 'standardwebhooks';
import { DataSource } from 'typeorm';
import { AccountsService } from '../../src/accounts/accounts.service';
import { INVITE_REFUSED, UsersService } from '../../src/accounts/users.service';
import { adminCliJson } from '../support/admin-cli';
import { launchTestBrowser, seriousAxeViolations } from '../support/test-browser';
import { startPageServer, PageServer } from '../support/page-server';
import { startTestApp, TestApp, waitForJob } from '../support/test-app';
import { startWebhookReceiver, WebhookReceiver } from '../support/webhook-receiver';

/** Where the 1280×800 PNG of every page goes (look at them). */
const SCREENSHOT_DIR = process.env.DASHBOARD_SCREENSHOT_DIR ?? join(tmpdir(), 'glimpse-dashboard-screenshots');
const PASSWORD = 'correct horse battery staple';

describe('dashboard (real Chromium against the real app)', () => {
  let t: TestApp;
  let browser: Browser;
  let pages: PageServer;
  let receiver: WebhookReceiver;
  /** Owner of account A, signed in for most tests. */
  let owner: { context: BrowserContext; page: Page; email: string; accountId: string };
  const cspViolations: string[] = [];

  /** Runs one admin CLI command against the test app and returns its JSON. */
  const cli = (...args: string[]): Promise<any> => adminCliJson(t, ...args);

  async function newPage(): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, baseURL: t.baseUrl });
    const page = await context.newPage();
    page.on('console', (msg) => {
      if (/Content Security Policy|Refused to/i.test(msg.text())) cspViolations.push(`${page.url()}: ${msg.text().slice(0, 120)}`);
    });
    return { context, page };
  }

  /** A new account with an owner user made by the CLI who has set a password; returns a signed-in page. */
  async function newOwner(plan = 'pro'): Promise<{ context: BrowserContext; page: Page; email: string; accountId: string }> {
    const email = `owner-${Math.random().toString(36).slice(2)}@test.local`;
    const account = await cli('account:create', '--email', email, '--plan', plan);
    const user = await cli('user:create', '--account', account.id, '--email', email);
    const { context, page } = await newPage();
    await setPassword(page, user.setPasswordUrl);
    return { context, page, email, accountId: account.id };
  }

  async function setPassword(page: Page, url: string): Promise<void> {
    await page.goto(url);
    await page.getByLabel('New password').fill(PASSWORD);
    await page.getByLabel('Repeat the password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await page.waitForURL('**/dashboard');
  }

  /** Axe (no serious or critical violation) and a 1280×800 PNG of the page as it is. */
  async function audit(page: Page, name: string): Promise<void> {
    await page.waitForLoadState('networkidle');
    // caret 'initial': Playwright's default caret hiding injects an inline <style>, which this CSP
    // refuses (and which would be reported as a violation below).
    await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), caret: 'initial' });
    expect(await seriousAxeViolations(page)).toEqual([]);
  }

  async function sessionCookie(context: BrowserContext) {
    return (await context.cookies()).find((c) => c.name === 'glimpse_session');
  }

  beforeAll(async () => {
    mkdirSync(SCREENSHOT_DIR, { recursive: true });
    t = await startTestApp({ env: { WEBHOOK_ALLOW_HTTP: 'true', DASHBOARD_SIGNUP: 'true' } });
    browser = await launchTestBrowser(t.config);
    pages = await startPageServer({
      '/': '<!doctype html><html><body style="background:#0a6;color:#fff;font:48px sans-serif"><h1>Hello from loopback</h1></body></html>',
    });
    receiver = await startWebhookReceiver();
    owner = await newOwner();
  });

  afterAll(async () => {
    await browser?.close();
    await pages?.close();
    await receiver?.close();
    await t?.close();
  });

  afterEach(() => {
    const seen = cspViolations.splice(0);
    expect(seen).toEqual([]);
  });

  it('signs in with the CLI-made user; a wrong password shows an error and starts no session; CSRF-less POSTs are refused', async () => {
    // The sign-in page, signed out.
    const { context, page } = await newPage();
    const anonymous = await fetch(`${t.baseUrl}/dashboard/keys`, { redirect: 'manual' });
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.get('location')).toBe('/dashboard/login');

    await page.goto('/dashboard/login');
    await audit(page, '01-sign-in');
    await page.getByLabel('Email').fill(owner.email);
    await page.getByLabel('Password').fill('not the password at all');
    const [failed] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/dashboard/login') && r.request().method() === 'POST'),
      page.getByRole('button', { name: 'Sign in' }).click(),
    ]);
    expect(failed.status()).toBe(401);
    expect(await page.getByRole('alert').textContent()).toContain('That email and password do not match.');
    expect(await sessionCookie(context)).toBeUndefined();
    await audit(page, '02-sign-in-error');

    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL('**/dashboard');
    // A full page load after sign-in: the chart library is there for the Overview.
    expect(await page.evaluate(() => typeof (window as any).Chart)).toBe('function');
    const first = await sessionCookie(context);
    expect(first).toMatchObject({ httpOnly: true, sameSite: 'Lax', secure: false, path: '/dashboard' });

    // Signing in again regenerates the session: the old token no longer works.
    await page.goto('/dashboard/login');
    expect(page.url()).toMatch(/\/dashboard$/);
    const csrf = await page.locator('input[name=_csrf]').first().inputValue();
    const again = await context.request.post('/dashboard/login', {
      form: { _csrf: csrf, email: owner.email, password: PASSWORD },
      maxRedirects: 0,
    });
    expect(again.status()).toBe(303);
    const second = await sessionCookie(context);
    expect(second?.value).not.toBe(first?.value);
    const stale = await fetch(`${t.baseUrl}/dashboard`, { headers: { cookie: `glimpse_session=${first?.value}` }, redirect: 'manual' });
    expect(stale.status).toBe(303);

    // CSRF: no token, or another token, is a 403 and creates nothing.
    const before = (await cli('key:list', '--account', owner.accountId)).data.length;
    expect((await context.request.post('/dashboard/keys', { form: { name: 'csrf-less' } })).status()).toBe(403);
    expect((await context.request.post('/dashboard/keys', { form: { name: 'csrf-wrong', _csrf: 'x'.repeat(43) } })).status()).toBe(403);
    expect((await cli('key:list', '--account', owner.accountId)).data.length).toBe(before);

    // Security headers on every page.
    const res = await context.request.get('/dashboard');
    const csp = res.headers()['content-security-policy'];
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(res.headers()['x-content-type-options']).toBe('nosniff');
    expect(res.headers()['cache-control']).toBe('no-store');
    await context.close();
  });

  it('ends a session after 12 hours without a request', async () => {
    const { context, page } = await newPage();
    await page.goto('/dashboard/login');
    await page.getByLabel('Email').fill(owner.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL('**/dashboard');
    const token = (await sessionCookie(context))!.value;
    const hash = createHash('sha256').update(token).digest('hex');
    const db = t.get(DataSource);
    await db.query(`UPDATE dashboard_sessions SET last_seen_at = now() - interval '11 hours 59 minutes' WHERE token_hash = $1`, [hash]);
    expect((await context.request.get('/dashboard', { maxRedirects: 0 })).status()).toBe(200);
    await db.query(`UPDATE dashboard_sessions SET last_seen_at = now() - interval '12 hours 1 minute' WHERE token_hash = $1`, [hash]);
    const expired = await context.request.get('/dashboard', { maxRedirects: 0 });
    expect(expired.status()).toBe(303);
    expect(expired.headers()['location']).toBe('/dashboard/login');
    await context.close();
  });

  it('rate-limits sign-in: a 429 page after 10 failures in 15 minutes for one IP and email', async () => {
    const email = `limited-${Date.now()}@test.local`;
    const account = await cli('account:create', '--email', email);
    const user = await cli('user:create', '--account', account.id, '--email', email);
    const { context, page } = await newPage();
    await setPassword(page, user.setPasswordUrl);
    await context.clearCookies();
    await page.goto('/dashboard/login');
    const csrf = await page.locator('input[name=_csrf]').inputValue();
    for (let i = 0; i < 10; i++) {
      const res = await context.request.post('/dashboard/login', {
        form: { _csrf: csrf, email, password: `wrong password ${i}` },
        maxRedirects: 0,
      });
      expect(res.status()).toBe(401);
    }
    // Even the right password is refused now, with a page saying why.
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    const [limited] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/dashboard/login') && r.request().method() === 'POST'),
      page.getByRole('button', { name: 'Sign in' }).click(),
    ]);
    expect(limited.status()).toBe(429);
    expect(await page.getByRole('alert').textContent()).toContain('Too many failed sign-ins');
    expect(await sessionCookie(context)).toBeUndefined();
    await audit(page, '03-sign-in-rate-limited');
    // Another email from the same IP is not affected.
    const other = await context.request.post('/dashboard/login', {
      form: { _csrf: csrf, email: owner.email, password: PASSWORD },
      maxRedirects: 0,
    });
    expect(other.status()).toBe(303);
    await context.close();
  });

  it('rate-limits sign-in per IP too: 50 failures with any emails in 15 minutes lock that IP out, other IPs are not affected', async () => {
    const { context, page } = await newPage();
    await page.goto('/dashboard/login');
    const csrf = await page.locator('input[name=_csrf]').inputValue();
    const db = t.get(DataSource);
    const already: number = (
      await db.query(
        `SELECT count(*)::int AS n FROM sign_in_failures WHERE failed_at > now() - interval '15 minutes' AND ip LIKE '%127.0.0.1'`,
      )
    )[0].n;
    try {
      // One address spraying many emails, never more than a few per email.
      for (let i = already; i < 50; i++) {
        const res = await context.request.post('/dashboard/login', {
          form: { _csrf: csrf, email: `spray-${i}@test.local`, password: 'Winter2026!' },
          maxRedirects: 0,
        });
        expect(res.status()).toBe(401);
      }
      // Now even a real user with the right password is refused from this address, with a page saying why.
      const limited = await context.request.post('/dashboard/login', {
        form: { _csrf: csrf, email: owner.email, password: PASSWORD },
        maxRedirects: 0,
      });
      expect(limited.status()).toBe(429);
      expect(limited.headers()['retry-after']).toBe('900');
      expect(await limited.text()).toContain('Too many failed sign-ins from your network.');
      expect(await sessionCookie(context)).toBeUndefined();
      // A forged X-Forwarded-For does not get around it (TRUST_PROXY is unset: no proxy is trusted).
      const forged = await context.request.post('/dashboard/login', {
        form: { _csrf: csrf, email: owner.email, password: PASSWORD },
        headers: { 'x-forwarded-for': '203.0.113.9' },
        maxRedirects: 0,
      });
      expect(forged.status()).toBe(429);
      // Another address (127.0.0.2 on loopback) signs in as usual.
      expect(await signInFrom('127.0.0.2', owner.email, PASSWORD)).toBe(303);
    } finally {
      // Later tests sign in from 127.0.0.1.
      await db.query(`DELETE FROM sign_in_failures WHERE email LIKE 'spray-%'`);
      await context.close();
    }
  });

  /** Posts the sign-in form from a given loopback address (its own CSRF cookie); returns the status. */
  async function signInFrom(localAddress: string, email: string, password: string): Promise<number> {
    const send = (method: string, headers: Record<string, string>, body?: string) =>
      new Promise<{ status: number; headers: IncomingHttpHeaders; text: string }>((resolve, reject) => {
        const req = httpRequest(`${t.baseUrl}/dashboard/login`, { method, headers, localAddress }, (res) => {
          let text = '';
          res.on('data', (chunk) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
        });
        req.on('error', reject);
        req.end(body);
      });
    const form = await send('GET', {});
    const cookie = (form.headers['set-cookie'] ?? []).map((c) => c.split(';')[0]).join('; ');
    const csrf = /name="_csrf" value="([^"]+)"/.exec(form.text)![1];
    const body = new URLSearchParams({ _csrf: csrf, email, password }).toString();
    return (await send('POST', { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body)).status;
  }

  it('API keys: create → shown once → 202 → reload shows only the prefix → revoke → 401 API_KEY_REVOKED', async () => {
    const { page } = owner;
    await page.goto('/dashboard/keys');
    await page.getByLabel('Name').fill('production');
    await page.getByRole('button', { name: 'Create key' }).click();
    const shown = page.getByTestId('new-key');
    await shown.waitFor();
    const secret = (await shown.textContent())!.trim();
    expect(secret).toMatch(/^sk_live_[0-9A-Za-z]{32,}$/);
    await audit(page, '05-api-keys-created');

    const accepted = await t.request('POST', '/v1/screenshot', { key: secret, body: { url: `${pages.url}/` } });
    expect(accepted.status).toBe(202);

    await page.reload();
    expect(await page.getByTestId('new-key').count()).toBe(0);
    expect(await page.content()).not.toContain(secret);
    const row = page.locator('#keys-table tr', { hasText: 'production' });
    expect(await row.locator('code').textContent()).toBe(`${secret.slice(0, 12)}…`);
    await audit(page, '06-api-keys');

    await row.getByText('Revoke…').click();
    await row.getByRole('button', { name: 'Revoke key' }).click();
    await page.waitForURL('**/dashboard/keys?revoked=*');
    expect(await page.locator('#keys-table tr', { hasText: 'production' }).textContent()).toContain('Revoked');
    const refused = await t.request('POST', '/v1/screenshot', { key: secret, body: { url: `${pages.url}/` } });
    expect(refused.status).toBe(401);
    expect(refused.body.code).toBe('API_KEY_REVOKED');
  });

  it('usage: after two captures with a key, the key shows 2 and the chart has a point for today', async () => {
    const { page } = owner;
    await page.goto('/dashboard/keys');
    await page.getByLabel('Name').fill('usage');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = (await page.getByTestId('new-key').textContent())!.trim();
    const keyId = await page.locator('#keys-table tr', { hasText: 'usage' }).getAttribute('data-key-id');
    for (let i = 0; i < 2; i++) {
      const res = await t.request('POST', '/v1/screenshot', { key: secret, body: { url: `${pages.url}/` } });
      expect(res.status).toBe(202);
      await waitForJob(t, secret, res.body.id);
    }
    await page.goto('/dashboard');
    const keyRow = page.locator(`tr[data-key-id="${keyId}"]`);
    expect(await keyRow.getByTestId('key-used').textContent()).toBe('2');
    const today = new Date().toISOString().slice(0, 10);
    const chart = await page.waitForFunction(
      ({ keyId: id }) => {
        const canvas = document.querySelector('#usage-chart') as HTMLCanvasElement & { chart?: any };
        if (!canvas?.chart) return null;
        const data = JSON.parse(canvas.getAttribute('data-chart')!);
        const index = data.series.findIndex((s: any) => s.keyId === id);
        const bars = canvas.chart.data.datasets[index * 2].data;
        return {
          today: bars[bars.length - 1],
          lastLabel: canvas.chart.data.labels.at(-1),
          thresholds: canvas.chart.data.datasets.filter((d: any) => /of cap/.test(d.label)).map((d: any) => d.data[0]),
        };
      },
      { keyId },
    );
    expect(await chart.jsonValue()).toEqual({ today: 2, lastLabel: today.slice(5), thresholds: [8000, 9500] });
    // The table behind the chart says the same.
    const todayRow = page.locator(`#usage-table tr[data-day="${today}"]`);
    expect(await todayRow.locator('td').allTextContents()).toContain('2');
    await audit(page, '04-overview');
    // The page count is the same record the CLI reads.
    const listed = await cli('key:list', '--account', owner.accountId);
    expect(listed.data.find((k: any) => k.id === keyId).usedThisMonth).toBe(2);
  });

  it('webhooks: create → secret shown once → test → delivery logged as successful without reload → resend → disable/enable → rotate → delete', async () => {
    const { page } = owner;
    const url = receiver.route('dashboard', 200);
    await page.goto('/dashboard/webhooks');
    await page.getByLabel('Endpoint URL').fill(url);
    await page.getByLabel('Description').fill('Orders service');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const secret = (await page.getByTestId('signing-secret').textContent())!.trim();
    expect(secret).toMatch(/^whsec_/);
    await audit(page, '07-webhooks-created');
    await page.reload();
    expect(await page.content()).not.toContain(secret);
    await audit(page, '08-webhooks');

    await page.getByRole('link', { name: url }).click();
    await page.waitForURL('**/dashboard/webhooks/we_*');
    const endpointPath = new URL(page.url()).pathname;
    await page.getByRole('button', { name: 'Send test.ping' }).click();
    await page.getByText('Test event sent').waitFor();
    // From here on, the log must update by itself: mark the document and check it survives.
    await page.evaluate(() => ((window as any).__noReload = true));
    await page.locator('[data-testid=delivery-status]', { hasText: 'successful' }).waitFor({ timeout: 30000 });
    expect(await page.evaluate(() => (window as any).__noReload)).toBe(true);
    const [delivered] = await receiver.waitFor('dashboard', 1);
    expect(JSON.parse(delivered.body).type).toBe('test.ping');
    await audit(page, '09-webhook-endpoint');

    // Resend the delivery: the receiver gets it a second time.
    await page
      .getByRole('button', { name: /^Resend/ })
      .first()
      .click();
    await page.getByText('is being sent again').waitFor();
    await receiver.waitFor('dashboard', 2);

    // Disable, then enable again.
    await page.getByRole('button', { name: 'Disable', exact: true }).click();
    await page.locator('.details .badge', { hasText: 'Disabled' }).waitFor();
    await page.getByRole('button', { name: 'Enable', exact: true }).click();
    await page.locator('.details .badge', { hasText: 'Enabled' }).waitFor();

    // Rotate with the default 24 h overlap: a new secret, shown once.
    await page.getByText('Rotate secret…').click();
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    const rotated = (await page.getByTestId('signing-secret').textContent())!.trim();
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    expect(await page.locator('.alert-secret').textContent()).toContain('also with the old one for the next 24 hours');

    await page.getByText('Delete…').click();
    await page.getByRole('button', { name: 'Delete endpoint' }).click();
    await page.waitForURL('**/dashboard/webhooks');
    expect(await page.getByRole('link', { name: url }).count()).toBe(0);
    expect((await page.context().request.get(endpointPath)).status()).toBe(404);
  });

  it('webhooks: signature scheme at creation, edit, and a rotation overlap verified by the standardwebhooks package', async () => {
    const { page } = owner;
    const url = receiver.route('dashboard-manage', 200);
    await page.goto('/dashboard/webhooks');
    await page.getByLabel('Endpoint URL').fill(url);
    await page.getByLabel('Signature scheme').selectOption('standard-webhooks');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const secret = (await page.getByTestId('signing-secret').textContent())!.trim();
    await page.getByRole('link', { name: 'Open the endpoint' }).click();
    await page.waitForURL('**/dashboard/webhooks/we_*');
    expect(await page.getByTestId('signature-scheme').textContent()).toBe('standard-webhooks');

    // Edit: an invalid URL is an error in the form (the endpoint is unchanged); a valid edit is saved.
    await page.getByText('Edit…').click();
    await page.locator('#edit-description').fill('Billing');
    await page.locator('#edit-url').evaluate((el: HTMLInputElement) => (el.type = 'text')); // let the server judge it
    await page.locator('#edit-url').fill('ftp://example.com/x');
    await page.getByRole('button', { name: 'Save endpoint' }).click();
    await page.getByRole('alert').filter({ hasText: 'url' }).waitFor();
    await audit(page, '09b-webhook-edit-error');
    await page.locator('#edit-url').fill(url);
    await page.getByRole('button', { name: 'Save endpoint' }).click();
    await page.getByText('Endpoint saved.').waitFor();
    expect(await page.locator('.details').textContent()).toContain('Billing');

    // Rotate with the 24-hour overlap: the next delivery verifies with the old and the new secret.
    await page.getByText('Rotate secret…').click();
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    const rotated = (await page.getByTestId('signing-secret').textContent())!.trim();
    expect(rotated).not.toBe(secret);
    await page.getByRole('button', { name: 'Send test.ping' }).click();
    const [delivered] = await receiver.waitFor('dashboard-manage', 1);
    for (const s of [secret, rotated])
      expect(new Webhook(s).verify(delivered.body, delivered.headers as Record<string, string>)).toMatchObject({ type: 'test.ping' });
    await audit(page, '09c-webhook-standard');
  });

  it('screenshots: a playground capture with a chosen key counts once, is listed with its preview and has its page', async () => {
    const { page } = owner;
    await page.goto('/dashboard/keys');
    await page.getByLabel('Name').fill('playground');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByTestId('new-key').waitFor();
    const keyId = await page.locator('#keys-table tr', { hasText: 'playground' }).getAttribute('data-key-id');
    const usedBefore = (await cli('key:list', '--account', owner.accountId)).data.find((k: any) => k.id === keyId).usedThisMonth;

    await page.goto('/dashboard/playground');
    await page.getByLabel('Page URL').fill(`${pages.url}/`);
    await page.getByLabel('API key').selectOption(keyId!);
    await page.getByLabel('Width (px)').fill('1024');
    await page.getByLabel('Height (px)').fill('640');
    await page.getByRole('button', { name: 'Capture' }).click();
    const image = page.locator('#playground-result img.result');
    await image.waitFor({ timeout: 30000 });
    await page.waitForFunction(() => {
      const img = document.querySelector('#playground-result img.result') as HTMLImageElement | null;
      return img?.complete && img.naturalWidth === 1024 && img.naturalHeight === 640;
    });
    await audit(page, '10-playground');
    expect((await cli('key:list', '--account', owner.accountId)).data.find((k: any) => k.id === keyId).usedThisMonth).toBe(usedBefore + 1);

    await page.goto('/dashboard/screenshots');
    const row = page.locator('#jobs-table tbody tr').first();
    expect(await row.textContent()).toContain('1024×640');
    expect(await row.locator('img.thumb').evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(1024);
    await audit(page, '11-screenshots');
    await row.getByRole('link', { name: `${pages.url}/`, exact: true }).click();
    await page.waitForURL('**/dashboard/screenshots/scr_*');
    await page.locator('img.result').waitFor();
    // The whole page (followed as a boosted link), not the job card alone.
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toMatch(/^Screenshot scr_/);
    expect(await page.getByRole('navigation', { name: 'Dashboard' }).count()).toBe(1);
    await audit(page, '12-screenshot-detail');
  });

  it('account: invite a member by one-time link, the member signs in, the owner removes them; sessions listed and ended; password change', async () => {
    const { page } = owner;
    await page.goto('/dashboard/account');
    const memberEmail = `member-${Date.now()}@test.local`;
    await page.getByLabel('Email', { exact: true }).fill(memberEmail);
    await page.getByRole('button', { name: 'Create invite link' }).click();
    const link = (await page.getByTestId('invite-link').textContent())!.trim();
    expect(link).toMatch(new RegExp(`^${t.baseUrl}/dashboard/set-password/`));

    const member = await newPage();
    await setPassword(member.page, link);
    // The link works once.
    await member.page.goto(link);
    expect(await member.page.getByRole('alert').textContent()).toContain('expired or was already used');
    // A member sees the account's keys but cannot manage members.
    await member.page.goto('/dashboard/account');
    expect(await member.page.getByText('Only owners can invite or remove members.').count()).toBe(1);

    await page.goto('/dashboard/account');
    expect(await page.locator('#members-table').textContent()).toContain(memberEmail);
    await audit(page, '13-account');
    const row = page.locator('#members-table tr', { hasText: memberEmail });
    await row.getByText('Remove…').click();
    await row.getByRole('button', { name: 'Remove member' }).click();
    await page.waitForURL('**/dashboard/account?done=removed');
    expect(await page.locator('#members-table').textContent()).not.toContain(memberEmail);
    const gone = await member.context.request.get('/dashboard', { maxRedirects: 0 });
    expect(gone.status()).toBe(303);
    await member.context.close();

    // A second session of the owner is listed and can be signed out from the first.
    const second = await newPage();
    await second.page.goto('/dashboard/login');
    await second.page.getByLabel('Email').fill(owner.email);
    await second.page.getByLabel('Password').fill(PASSWORD);
    await second.page.getByRole('button', { name: 'Sign in' }).click();
    await second.page.waitForURL('**/dashboard');
    await page.goto('/dashboard/account');
    const others = page.locator('#sessions-table tbody tr:not(:has(.badge))');
    expect(await others.count()).toBeGreaterThanOrEqual(1);
    await others.first().getByRole('button', { name: 'Sign out this session' }).click();
    await page.waitForURL('**/dashboard/account?done=session');
    expect((await second.context.request.get('/dashboard', { maxRedirects: 0 })).status()).toBe(303);
    await second.context.close();

    // Password change: a wrong current password is refused, then the change works.
    await page.getByLabel('Current password').fill('wrong current password');
    await page.getByLabel('New password', { exact: false }).first().fill('a brand new passphrase');
    await page.getByLabel('Repeat the new password').fill('a brand new passphrase');
    await page.getByRole('button', { name: 'Change password' }).click();
    expect(await page.getByRole('alert').textContent()).toContain('current password is not correct');
    await page.getByLabel('Current password').fill(PASSWORD);
    await page.getByLabel('New password', { exact: false }).first().fill('a brand new passphrase');
    await page.getByLabel('Repeat the new password').fill('a brand new passphrase');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByText('Password changed.').waitFor();
    const verified = await cli('user:reset-password', '--email', owner.email);
    expect(verified.id).toMatch(/^usr_/);
  });

  it('invites never reveal whether another account has a user with that email: the same neutral message as for an existing member', async () => {
    const b = await newOwner();
    const { page } = owner;
    const refusal = async (email: string) => {
      await page.goto('/dashboard/account');
      await page.getByLabel('Email', { exact: true }).fill(email);
      const [res] = await Promise.all([
        page.waitForResponse((r) => r.url().endsWith('/dashboard/account/invite') && r.request().method() === 'POST'),
        page.getByRole('button', { name: 'Create invite link' }).click(),
      ]);
      expect(res.status()).toBe(400);
      expect(await page.getByTestId('invite-link').count()).toBe(0);
      return (await page.getByRole('alert').textContent())!.trim();
    };
    const otherAccount = await refusal(b.email);
    const ownAccount = await refusal(owner.email);
    expect(otherAccount).toBe(ownAccount);
    expect(otherAccount).toBe(INVITE_REFUSED);
    expect(otherAccount).not.toMatch(/exist|another account|already/i);
    await audit(page, '13b-account-invite-refused');
    expect(await page.content()).not.toContain(b.accountId);
    // Nothing changed: B's user is still B's, and A's members do not list it.
    expect((await t.get(UsersService).findByEmail(b.email))?.accountId).toBe(b.accountId);
    expect(await page.locator('#members-table').textContent()).not.toContain(b.email);
    await b.context.close();
  });

  it('isolation: a member of account B never sees or touches account A’s keys, jobs or endpoints (direct URLs are 404)', async () => {
    // Account A's records.
    const a = owner;
    const key = await cli('key:create', '--account', a.accountId, '--name', 'a-secret-key');
    const job = await t.request('POST', '/v1/screenshot', { key: key.key, body: { url: `${pages.url}/` } });
    const endpoint = await t.request('POST', '/v1/webhooks', { key: key.key, body: { url: receiver.route('isolation', 200) } });
    expect(endpoint.status).toBe(201);

    const b = await newOwner();
    for (const path of ['/dashboard/keys', '/dashboard/webhooks', '/dashboard/screenshots', '/dashboard']) {
      const html = await (await b.context.request.get(path)).text();
      expect(html).not.toContain(key.id);
      expect(html).not.toContain(key.prefix);
      expect(html).not.toContain(job.body.id);
      expect(html).not.toContain(endpoint.body.id);
    }
    for (const path of [
      `/dashboard/screenshots/${job.body.id}`,
      `/dashboard/webhooks/${endpoint.body.id}`,
      `/dashboard/webhooks/${endpoint.body.id}/deliveries`,
    ]) {
      expect((await b.context.request.get(path)).status()).toBe(404);
    }
    await b.page.goto(`/dashboard/webhooks/${endpoint.body.id}`);
    await audit(b.page, '14-not-found');
    const csrf = await b.page.locator('input[name=_csrf]').first().inputValue();
    for (const path of [
      `/dashboard/keys/${key.id}/revoke`,
      `/dashboard/webhooks/${endpoint.body.id}/rotate`,
      `/dashboard/webhooks/${endpoint.body.id}/test`,
      `/dashboard/webhooks/${endpoint.body.id}/delete`,
    ]) {
      expect((await b.context.request.post(path, { form: { _csrf: csrf }, maxRedirects: 0 })).status()).toBe(404);
    }
    // A's members and sessions are out of reach too.
    await a.page.goto('/dashboard/account');
    const aUserId = await a.page.locator('#members-table tbody tr').first().getAttribute('data-user-id');
    const aSessionId = await a.page.locator('#sessions-table tbody tr').first().getAttribute('data-session-id');
    expect(
      (await b.context.request.post(`/dashboard/account/members/${aUserId}/remove`, { form: { _csrf: csrf }, maxRedirects: 0 })).status(),
    ).toBe(404);
    expect(
      (
        await b.context.request.post(`/dashboard/account/sessions/${aSessionId}/revoke`, { form: { _csrf: csrf }, maxRedirects: 0 })
      ).status(),
    ).toBe(404);
    const playground = await b.context.request.post('/dashboard/playground', {
      form: { _csrf: csrf, keyId: key.id, url: `${pages.url}/` },
    });
    expect(playground.status()).toBe(400);
    // A's key still works and its endpoint still exists.
    expect((await t.request('GET', `/v1/webhooks`, { key: key.key })).body.data.map((e: any) => e.id)).toContain(endpoint.body.id);
    expect((await t.request('POST', '/v1/screenshot', { key: key.key, body: { url: `${pages.url}/` } })).status).toBe(202);
    await b.context.close();
  });

  it('sign-up (DASHBOARD_SIGNUP=true) creates a free account with its owner, who then signs in; the CLI prints working set-password links', async () => {
    const { context, page } = await newPage();
    await page.goto('/dashboard/signup');
    await audit(page, '15-sign-up');
    const email = `signup-${Date.now()}@test.local`;
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('short');
    await page.getByRole('button', { name: 'Create account' }).click();
    // The browser's own minlength check keeps the form; remove it to see the server's answer.
    await page.locator('#password').evaluate((el: HTMLInputElement) => el.removeAttribute('minlength'));
    await page.getByRole('button', { name: 'Create account' }).click();
    expect(await page.getByRole('alert').textContent()).toContain('at least 12 characters');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    // Sign-up starts no session (CONTRACT.md, "Dashboard"): the new user signs in.
    await page.waitForURL('**/dashboard/login?signed-up=1');
    expect(await sessionCookie(context)).toBeUndefined();
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL('**/dashboard');
    expect(await page.locator('.stat', { hasText: 'Plan' }).textContent()).toContain('free');
    expect((await t.get(AccountsService).get(email)).plan).toBe('free');
    await context.close();

    // user:reset-password prints a link that sets a new password once.
    const reset = await cli('user:reset-password', '--email', email);
    expect(reset.setPasswordUrl).toMatch(new RegExp(`^${t.baseUrl}/dashboard/set-password/[A-Za-z0-9_-]{43}$`));
    const fresh = await newPage();
    await fresh.page.goto(reset.setPasswordUrl);
    await audit(fresh.page, '16-set-password');
    await setPassword(fresh.page, reset.setPasswordUrl);
    await fresh.context.close();
  });
});
