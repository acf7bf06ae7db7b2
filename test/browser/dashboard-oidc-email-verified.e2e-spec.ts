import { Browser } from 'playwright';
import { AccountsService } from '../../src/accounts/accounts.service';
import { UsersService } from '../../src/accounts/users.service';
import { launchTestBrowser } from '../support/test-browser';
import { OidcProviderOnLoopback, startOidcProvider } from '../support/oidc-provider';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * CONTRACT.md, "Dashboard": OIDC sign-in links an existing user only when the provider says
 * `email_verified: true`. The provider's dev login name picks the claims: `noclaim:<email>` sends no
 * `email_verified` (as Microsoft Entra ID does), `string:<email>` sends it as the string "true",
 * `verified:<email>` sends `true`.
 */
describe('dashboard OIDC sign-in needs email_verified: true', () => {
  let t: TestApp;
  let browser: Browser;
  let idp: OidcProviderOnLoopback;
  let issuer: string;

  beforeAll(async () => {
    idp = await startOidcProvider(
      (id) => {
        const [kind, email] = id.split(':');
        const verified = kind === 'verified' ? { email_verified: true } : kind === 'string' ? { email_verified: 'true' } : {};
        return { email, ...verified };
      },
      (env) => startTestApp({ runProcessors: false, env }),
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
