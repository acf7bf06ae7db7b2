import AxeBuilder from '@axe-core/playwright';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Browser, chromium } from 'playwright';
import { AccountsService } from '../../src/accounts/accounts.service';
import { UsersService } from '../../src/accounts/users.service';
import { startTestApp, TestApp } from '../support/test-app';

// oidc-provider 7 (CommonJS, no bundled types): the identity provider, on loopback, for this test only.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { Provider } = require('oidc-provider');

const SCREENSHOT_DIR = process.env.DASHBOARD_SCREENSHOT_DIR ?? join(tmpdir(), 'glimpse-dashboard-screenshots');

describe('dashboard with sign-up off and OpenID Connect sign-in (oidc-provider on loopback)', () => {
  let t: TestApp;
  let browser: Browser;
  let idp: Server;
  let issuer: string;

  beforeAll(async () => {
    // The provider's port must be known before the app starts (OIDC_ISSUER); its handler is mounted
    // once the app's callback URL is known.
    let handler: Parameters<typeof createServer>[1] = (_req, res) => res.writeHead(503).end();
    idp = createServer((req, res) => handler!(req, res));
    await new Promise<void>((resolve) => idp.listen(0, '127.0.0.1', resolve));
    issuer = `http://127.0.0.1:${(idp.address() as AddressInfo).port}`;
    t = await startTestApp({ env: { OIDC_ISSUER: issuer, OIDC_CLIENT_ID: 'glimpse-dashboard', OIDC_CLIENT_SECRET: 'a-client-secret-for-tests' } });
    // The provider's quick-start warnings (in-memory adapter, dev keys, dev interactions) are expected here.
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    const provider = new Provider(issuer, {
      clients: [
        {
          client_id: 'glimpse-dashboard',
          client_secret: 'a-client-secret-for-tests',
          redirect_uris: [`${t.baseUrl}/dashboard/oidc/callback`],
          grant_types: ['authorization_code'],
          response_types: ['code'],
        },
      ],
      // Dev interactions: any login name signs in; it is used as the account id and the email.
      findAccount: async (_ctx: unknown, id: string) => ({ accountId: id, claims: async () => ({ sub: id, email: id, email_verified: !id.startsWith('unverified') }) }),
      claims: { openid: ['sub'], email: ['email', 'email_verified'] },
      pkce: { required: () => true, methods: ['S256'] },
      cookies: { keys: ['oidc-test-cookie-key'] },
      ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Session: 600, Grant: 600 },
    });
    warn.mockRestore();
    handler = provider.callback();
    browser = await chromium.launch({ executablePath: t.config.chromiumPath ?? '/usr/bin/chromium', args: ['--no-sandbox'] });
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await new Promise((resolve) => idp?.close(resolve));
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
    const results = await new AxeBuilder({ page: loginPage }).analyze();
    expect(results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id)).toEqual([]);
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
