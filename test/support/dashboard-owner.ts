import type { Browser, BrowserContext, Page } from 'playwright';
import { adminCliJson } from './admin-cli';
import type { TestApp } from './test-app';

/** The password every signed-in test owner sets. */
export const OWNER_PASSWORD = 'correct horse battery staple';

/**
 * A new account on `pro` with one API key named `keyName` and an owner (e-mail `<prefix>-<random>@test.local`)
 * who set {@link OWNER_PASSWORD} through the set-password link and is signed in: a 1280×800 page on
 * the dashboard. Messages of the page that report a Content Security Policy refusal are pushed to
 * `cspViolations` (the caller expects none).
 */
export async function signedInOwner(
  t: TestApp,
  browser: Browser,
  options: { prefix: string; keyName: string; cspViolations: string[] },
): Promise<{ context: BrowserContext; page: Page; accountId: string; key: string; keyId: string }> {
  const email = `${options.prefix}-${Math.random().toString(36).slice(2)}@test.local`;
  const account = await adminCliJson(t, 'account:create', '--email', email, '--plan', 'pro');
  const user = await adminCliJson(t, 'user:create', '--account', account.id, '--email', email);
  const key = await adminCliJson(t, 'key:create', '--account', account.id, '--name', options.keyName);
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, baseURL: t.baseUrl });
  const page = await context.newPage();
  page.on('console', (msg) => {
    if (/Content Security Policy|Refused to/i.test(msg.text())) options.cspViolations.push(`${page.url()}: ${msg.text().slice(0, 160)}`);
  });
  await page.goto(user.setPasswordUrl);
  await page.getByLabel('New password').fill(OWNER_PASSWORD);
  await page.getByLabel('Repeat the password').fill(OWNER_PASSWORD);
  await page.getByRole('button', { name: 'Set password and sign in' }).click();
  await page.waitForURL('**/dashboard');
  return { context, page, accountId: account.id, key: key.key, keyId: key.id };
}
