import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { Browser, chromium } from 'playwright';
import { AccountsService } from '../../src/accounts/accounts.service';
import { UsersService } from '../../src/accounts/users.service';
import { startTestApp, TestApp } from '../support/test-app';

// oidc-provider 7 (CommonJS, no bundled types): the identity provider, on loopback, for this test only.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { Provider } = require('oidc-provider');

/**
 * CONTRACT.md, "Dashboard": OIDC sign-in links an existing user only when the provider says
 * `email_verified: true`. The provider's dev login name picks the claims: `noclaim:<email>` sends no
 * `email_verified` (as Microsoft Entra ID does), `string:<email>` sends it as the string "true",
 * `verified:<email>` sends `true`.
 */
describe('dashboard OIDC sign-in needs email_verified: true', () => {
  let t: TestApp;
  let browser: Browser;
  let idp: Server;
  let issuer: string;

  beforeAll(async () => {
    let handler: Parameters<typeof createServer>[1] = (_req, res) => res.writeHead(503).end();
    idp = createServer((req, res) => handler!(req, res));
    await new Promise<void>((resolve) => idp.listen(0, '127.0.0.1', resolve));
    issuer = `http://127.0.0.1:${(idp.address() as AddressInfo).port}`;
    t = await startTestApp({ runProcessors: false, env: { OIDC_ISSUER: issuer, OIDC_CLIENT_ID: 'glimpse-dashboard', OIDC_CLIENT_SECRET: 'a-client-secret-for-tests' } });
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
      findAccount: async (_ctx: unknown, id: string) => {
        const [kind, email] = id.split(':');
        const verified = kind === 'verified' ? { email_verified: true } : kind === 'string' ? { email_verified: 'true' } : {};
        return { accountId: id, claims: async () => ({ sub: id, email, ...verified }) };
      },
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
    const context = await browser.newContext({ baseURL: t.baseUrl });
    const page = await context.newPage();
    await page.goto('/dashboard/oidc/start');
    await page.waitForURL(`${issuer}/**`);
    await page.locator('input[name=login]').fill(login);
    await page.locator('input[name=password]').fill('anything');
    await page.locator('button[type=submit]').click();
    await page.locator('button[type=submit]', { hasText: /continue/i }).click();
    await page.waitForURL(`${t.baseUrl}/dashboard**`);
    const session = (await context.cookies()).find((c) => c.name === 'glimpse_session' && c.value);
    const text = (await page.locator('main').textContent()) ?? '';
    await context.close();
    return { session, text };
  }

  it('refuses an existing user’s email when the claim is missing or not the boolean true, and signs in with email_verified: true', async () => {
    const email = `victim-${Date.now()}@corp.test`;
    const account = await t.get(AccountsService).create(email, 'pro');
    await t.get(UsersService).create(account.id, email, 'owner');

    const missing = await signInThroughProvider(`noclaim:${email}`);
    expect(missing.session).toBeUndefined();
    expect(missing.text).toContain('did not share a verified email');

    const stringly = await signInThroughProvider(`string:${email}`);
    expect(stringly.session).toBeUndefined();
    expect(stringly.text).toContain('did not share a verified email');

    const verified = await signInThroughProvider(`verified:${email}`);
    expect(verified.session).toBeDefined();
  });
});
