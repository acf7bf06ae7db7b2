import { DataSource } from 'typeorm';
import { AccountsService } from '../../src/accounts/accounts.service';
import { PasswordHasher } from '../../src/accounts/password-hasher';
import { UsersService } from '../../src/accounts/users.service';
import { byStatus, postForm } from '../support/dashboard-forms';
import { startTestApp, TestApp } from '../support/test-app';

const PASSWORD = 'correct horse battery staple';

/**
 * CONTRACT.md, "Dashboard": sign-in limits hold under concurrency (10 failures per email from any
 * client, 50 per client), the password is not checked past them; set-password tokens are checked
 * before any hashing, and hashing runs at most PASSWORD_HASH_CONCURRENCY at once. Each test counts the
 * argon2 computations the requests caused (PasswordHasher's counters), not timings.
 */
describe('dashboard sign-in limits and password hashing under concurrency', () => {
  let t: TestApp;
  let hasher: PasswordHasher;

  beforeAll(async () => {
    t = await startTestApp({ runProcessors: false });
    hasher = t.get(PasswordHasher);
  });

  afterAll(async () => {
    await t?.close();
  });

  /** A user with a password set, in a new account. */
  async function userWithPassword(): Promise<string> {
    const email = `signin-${Math.random().toString(36).slice(2)}@test.local`;
    const account = await t.get(AccountsService).create(email, 'free');
    const user = await t.get(UsersService).create(account.id, email, 'owner');
    const token = user.setPasswordUrl.split('/').pop()!;
    await t.get(UsersService).setPasswordWithLink(token, PASSWORD);
    return email;
  }

  const signIn = (email: string, password: string, from = '127.0.0.1') =>
    postForm(t.baseUrl, '/dashboard/login', { email, password }, from);

  it('40 concurrent wrong passwords for one user: exactly 10 are checked (401), 30 are refused unchecked (429 with Retry-After)', async () => {
    const email = await userWithPassword();
    const before = hasher.stats().verified;
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => signIn(email, `wrong password ${i}`, '127.0.0.2')));
    expect(byStatus(answers)).toEqual({ 401: 10, 429: 30 });
    expect(hasher.stats().verified - before).toBe(10);
    for (const limited of answers.filter((a) => a.status === 429)) expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    // The right password is refused now too, and not checked.
    const right = await signIn(email, PASSWORD, '127.0.0.2');
    expect(right.status).toBe(429);
    expect(right.text).toContain('Too many failed sign-ins for this email.');
    expect(hasher.stats().verified - before).toBe(10);
  });

  it('counts failures per email whatever the client: 10 failures from 10 addresses lock the email for an 11th address', async () => {
    const email = await userWithPassword();
    for (let i = 0; i < 10; i++) expect((await signIn(email, 'not the password', `127.0.1.${i + 1}`)).status).toBe(401);
    const before = hasher.stats().verified;
    const fromElsewhere = await signIn(email, PASSWORD, '127.0.1.11');
    expect(fromElsewhere.status).toBe(429);
    expect(Number(fromElsewhere.headers['retry-after'])).toBeGreaterThan(0);
    expect(hasher.stats().verified).toBe(before);
  });

  it('counts failures per client whatever the emails: of 60 concurrent attempts with 60 emails, exactly 50 are checked; other clients are not affected', async () => {
    const email = await userWithPassword();
    const before = hasher.stats().verified;
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) => signIn(`spray-${i}-${Date.now()}@test.local`, 'Winter2026!', '127.0.2.1')),
    );
    expect(byStatus(answers)).toEqual({ 401: 50, 429: 10 });
    expect(hasher.stats().verified - before).toBe(50);
    const limited = await signIn(email, PASSWORD, '127.0.2.1');
    expect(limited.status).toBe(429);
    expect(limited.text).toContain('Too many failed sign-ins from your network.');
    expect((await signIn(email, PASSWORD, '127.0.2.2')).status).toBe(303);
  });

  it('a right password is not counted as a failure: 30 sign-ins in a row from one client all succeed', async () => {
    const email = await userWithPassword();
    for (let i = 0; i < 30; i++) expect((await signIn(email, PASSWORD, '127.0.3.1')).status).toBe(303);
    const [{ n }] = await t.get(DataSource).query(`SELECT count(*)::int AS n FROM sign_in_failures WHERE email = $1`, [email]);
    expect(n).toBe(0);
  });

  it('an unknown or used set-password token costs no hashing: 50 concurrent posts, 0 argon2 computations', async () => {
    const before = hasher.stats();
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        postForm(t.baseUrl, `/dashboard/set-password/not-a-token-${i}`, { password: PASSWORD, confirmPassword: PASSWORD }),
      ),
    );
    expect(byStatus(answers)).toEqual({ 410: 50 });
    expect(hasher.stats().hashed - before.hashed).toBe(0);
    expect(hasher.stats().verified - before.verified).toBe(0);
  });

  it('hashing runs at most PASSWORD_HASH_CONCURRENCY (default 2) at once: 12 concurrent posts of one valid link, one wins', async () => {
    expect(t.config.passwordHashConcurrency).toBe(2);
    const email = `link-${Math.random().toString(36).slice(2)}@test.local`;
    const account = await t.get(AccountsService).create(email, 'free');
    const { setPasswordUrl } = await t.get(UsersService).create(account.id, email, 'owner');
    const path = new URL(setPasswordUrl).pathname;
    const before = hasher.stats().hashed;
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => postForm(t.baseUrl, path, { password: PASSWORD, confirmPassword: PASSWORD })),
    );
    expect(answers.filter((a) => a.status === 303)).toHaveLength(1);
    expect(answers.filter((a) => a.status !== 303).every((a) => a.status === 410)).toBe(true);
    expect(hasher.stats().hashed - before).toBeGreaterThanOrEqual(1);
    expect(hasher.stats().peakInFlight).toBeLessThanOrEqual(2);
  });
});
