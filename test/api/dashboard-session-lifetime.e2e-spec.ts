import { createHash } from 'node:crypto';
import { DataSource } from 'typeorm';
import { AccountsService } from '../../src/accounts/accounts.service';
import { UsersService } from '../../src/accounts/users.service';
import { postForm, sessionCookieOf } from '../support/dashboard-forms';
import { startTestApp, TestApp } from '../support/test-app';

const PASSWORD = 'correct horse battery staple';
const NEW_PASSWORD = 'another long passphrase';

/** CONTRACT.md, "Dashboard": a session lasts at most 7 days; changing or resetting a password ends the user's other sessions. */
describe('dashboard session lifetime', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ runProcessors: false });
  });

  afterAll(async () => {
    await t?.close();
  });

  async function user(): Promise<string> {
    const email = `sessions-${Math.random().toString(36).slice(2)}@test.local`;
    const account = await t.get(AccountsService).create(email, 'free');
    const created = await t.get(UsersService).create(account.id, email, 'owner');
    await t.get(UsersService).setPasswordWithLink(created.setPasswordUrl.split('/').pop()!, PASSWORD);
    return email;
  }

  async function signIn(email: string, password = PASSWORD): Promise<string> {
    const answer = await postForm(t.baseUrl, '/dashboard/login', { email, password }, '127.0.5.1');
    expect(answer.status).toBe(303);
    return sessionCookieOf(answer)!;
  }

  const status = async (cookie: string, path = '/dashboard') =>
    (await fetch(`${t.baseUrl}${path}`, { headers: { cookie }, redirect: 'manual' })).status;
  const tokenHash = (cookie: string) => createHash('sha256').update(cookie.split('=')[1]).digest('hex');

  it('ends a session 7 days after sign-in even when it was used a minute ago', async () => {
    const email = await user();
    const young = await signIn(email);
    const old = await signIn(email);
    const db = t.get(DataSource);
    await db.query(
      `UPDATE dashboard_sessions SET created_at = now() - interval '6 days 23 hours', last_seen_at = now() - interval '1 minute' WHERE token_hash = $1`,
      [tokenHash(young)],
    );
    await db.query(
      `UPDATE dashboard_sessions SET created_at = now() - interval '7 days 1 minute', last_seen_at = now() - interval '1 minute' WHERE token_hash = $1`,
      [tokenHash(old)],
    );
    expect(await status(young)).toBe(200);
    expect(await status(old)).toBe(303);
  });

  it('changing the password ends the user’s other sessions and keeps the one that changed it', async () => {
    const email = await user();
    const here = await signIn(email);
    const elsewhere = await signIn(email);
    const page = await (await fetch(`${t.baseUrl}/dashboard/account`, { headers: { cookie: here } })).text();
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page)![1];
    const body = new URLSearchParams({ _csrf: csrf, currentPassword: PASSWORD, newPassword: NEW_PASSWORD, confirmPassword: NEW_PASSWORD });
    const changed = await fetch(`${t.baseUrl}/dashboard/account/password`, {
      method: 'POST',
      headers: { cookie: here, 'content-type': 'application/x-www-form-urlencoded' },
      body,
      redirect: 'manual',
    });
    expect(changed.status).toBe(200);
    expect(await changed.text()).toContain('Password changed.');
    expect(await status(here)).toBe(200);
    expect(await status(elsewhere)).toBe(303);
  });

  it('a password reset through a set-password link ends every earlier session', async () => {
    const email = await user();
    const before = [await signIn(email), await signIn(email)];
    const { setPasswordUrl } = await t.get(UsersService).resetPasswordLink(email);
    const reset = await postForm(
      t.baseUrl,
      new URL(setPasswordUrl).pathname,
      { password: NEW_PASSWORD, confirmPassword: NEW_PASSWORD },
      '127.0.5.2',
    );
    expect(reset.status).toBe(303);
    for (const cookie of before) expect(await status(cookie)).toBe(303);
    expect(await status(sessionCookieOf(reset)!)).toBe(200);
  });
});
