import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Browser } from 'playwright';
import { AccountsService } from '../../src/accounts/accounts.service';
import { UsersService } from '../../src/accounts/users.service';
import { launchTestBrowser, seriousAxeViolations } from '../support/test-browser';
import { OidcProviderOnLoopback, startOidcProvider } from '../support/oidc-provider';
import { startTestApp, TestApp } from '../support/test-app';

const SCREENSHOT_DIR = process.env.DASHBOARD_SCREENSHOT_DIR ?? join(tmpdir(), 'glimpse-dashboard-screenshots');

describe('dashboard with sign-up off and OpenID Connect sign-in (oidc-provider on loopback)', () => {
  let t: TestApp;
  let browser: Browser;
  let idp: OidcProviderOnLoopback;
  let issuer: string;

  beforeAll(async () => {
    // Dev interactions: any login name signs in; it is used as the account id and the email.
    idp = await startOidcProvider(
      (id) => ({ email: id, email_verified: !id.startsWith('unverified') }),
      (env) => startTestApp({ env }),
    );
    ({ issuer, app: t } = idp);
    browser = await launchTestBrowser(t.config);
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await idp?.close();
  });

  async function signInThroughProvider(login: string) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, baseURL: t.baseUrl });
    const page = await context.newPage();
    await page.goto('/dashboard/login');
    await page.getByRole('link', { name: 'Sign in with single sign-on' }).click();
    await page.waitForURL(`${issuer}/**`);
    await page.locator('input[name=login]').fill(login);
    await page.locator('input[name=password]').fill('anything');
    await page.locator('button[type=submit]').click();
    await page.locator('button[type=submit]', { hasText: /continue/i }).click();
    await page.waitForURL(`${t.baseUrl}/dashboard**`);
    return { context, page };
  }

  it('signs in the Glimpse user whose email the provider verified, with a fresh session', async () => {
    const email = `sso-${Date.now()}@corp.test`;
    const account = await t.get(AccountsService).create(email, 'starter');
    await t.get(UsersService).create(account.id, email, 'owner');

    const login = await (await fetch(`${t.baseUrl}/dashboard/login`)).text();
    expect(login).toContain('Sign in with single sign-on');

    const { context, page } = await signInThroughProvider(email);
    expect(new URL(page.url()).pathname).toBe('/dashboard');
    expect(await page.locator('.whoami').textContent()).toContain(email);
    const cookie = (await context.cookies()).find((c) => c.name === 'glimpse_session');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax' });
    await page.goto('/dashboard/login');
    await page.waitForURL('**/dashboard');
    await context.close();

    const signedOut = await browser.newContext({ viewport: { width: 1280, height: 800 }, baseURL: t.baseUrl });
    const loginPage = await signedOut.newPage();
    await loginPage.goto('/dashboard/login');
    await loginPage.screenshot({ path: join(SCREENSHOT_DIR, '17-sign-in-with-sso.png'), caret: 'initial' });
    expect(await seriousAxeViolations(loginPage)).toEqual([]);
    await signedOut.close();
  });

  it('with sign-up off: no sign-up page, and an owner’s invite link still lets the member in', async () => {
    expect((await fetch(`${t.baseUrl}/dashboard/signup`)).status).toBe(404);
    expect(await (await fetch(`${t.baseUrl}/dashboard/login`)).text()).not.toContain('Create an account');
    const email = `owner-${Date.now()}@corp.test`;
    const account = await t.get(AccountsService).create(email, 'free');
    const owner = await t.get(UsersService).create(account.id, email, 'owner');
    const invited = await t.get(UsersService).invite({ ...owner, hasPassword: true }, `invitee-${Date.now()}@corp.test`);
    const context = await browser.newContext({ baseURL: t.baseUrl });
    const page = await context.newPage();
    await page.goto(invited.setPasswordUrl);
    await page.getByLabel('New password').fill('a long enough passphrase');
    await page.getByLabel('Repeat the password').fill('a long enough passphrase');
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await page.waitForURL('**/dashboard');
    expect(await page.locator('.whoami').textContent()).toContain(invited.email);
    expect(await page.locator('.whoami .role').textContent()).toBe('member');
    await context.close();
  });

  it('refuses an email without a Glimpse user, an unverified email, and a callback without the flow cookie', async () => {
    const { context, page } = await signInThroughProvider(`stranger-${Date.now()}@corp.test`);
    expect(await page.locator('main').textContent()).toContain('There is no Glimpse user for');
    expect((await context.cookies()).find((c) => c.name === 'glimpse_session')).toBeUndefined();
    await context.close();

    const unverified = await signInThroughProvider(`unverified-${Date.now()}@corp.test`);
    expect(await unverified.page.locator('main').textContent()).toContain('did not share a verified email');
    await unverified.context.close();

    const forged = await fetch(`${t.baseUrl}/dashboard/oidc/callback?code=abc&state=def`);
    expect(forged.status).toBe(403);
    expect(forged.headers.get('set-cookie') ?? '').not.toContain('glimpse_session=');
  });
});
