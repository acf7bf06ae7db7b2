import { DataSource } from 'typeorm';
import { AccountsService } from '../../src/accounts/accounts.service';
import { INVITE_REFUSED, UsersService } from '../../src/accounts/users.service';
import { postForm, sessionCookieOf } from '../support/dashboard-forms';
import { startTestApp, TestApp } from '../support/test-app';

const PASSWORD = 'correct horse battery staple';

/**
 * CONTRACT.md, "Dashboard": sign-up and invitations answer the same whether or not the email has an
 * account; sign-up starts no session, is rate-limited per client and checks the email.
 */
describe('dashboard sign-up does not tell whether an email is known', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ runProcessors: false, env: { DASHBOARD_SIGNUP: 'true' } });
  });

  afterAll(async () => {
    await t?.close();
  });

  const signUp = (email: string, password: string, from: string) => postForm(t.baseUrl, '/dashboard/signup', { email, password }, from);
  const usersNamed = async (email: string) =>
    (await t.get(DataSource).query(`SELECT count(*)::int AS n FROM users WHERE email = $1`, [email]))[0].n;

  it('a new email, an email with a user and an email with only an account get the same answer and no session; only the new one gets an account, and signs in', async () => {
    const fresh = `fresh-${Date.now()}@test.local`;
    const created = await signUp(fresh, PASSWORD, '127.0.4.1');
    const answer = (a: typeof created) => ({ status: a.status, location: a.headers.location, text: a.text, session: sessionCookieOf(a) });
    expect(answer(created)).toEqual({ status: 303, location: '/dashboard/login?signed-up=1', text: expect.any(String), session: null });
    expect(await usersNamed(fresh)).toBe(1);

    // The same email again, with another password: the same answer; nothing changes.
    const again = await signUp(fresh, 'another password, twelve+', '127.0.4.1');
    expect(answer(again)).toEqual(answer(created));
    expect(await usersNamed(fresh)).toBe(1);
    expect(await t.get(UsersService).verifyCredentials(fresh, PASSWORD)).not.toBeNull();

    // An account made by the CLI (no user yet): the same answer again, and still no user.
    const accountOnly = `account-only-${Date.now()}@test.local`;
    await t.get(AccountsService).create(accountOnly, 'pro');
    const taken = await signUp(accountOnly, PASSWORD, '127.0.4.1');
    expect(answer(taken)).toEqual(answer(created));
    expect(await usersNamed(accountOnly)).toBe(0);
    expect((await t.get(AccountsService).get(accountOnly)).plan).toBe('pro');

    // The page it leads to says the same to everyone; the new user then signs in.
    const landing = await fetch(`${t.baseUrl}${created.headers.location}`);
    expect(landing.status).toBe(200);
    expect(await landing.text()).toContain('Sign in with your email and password to continue.');
    const signedIn = await postForm(t.baseUrl, '/dashboard/login', { email: fresh, password: PASSWORD }, '127.0.4.1');
    expect(signedIn.status).toBe(303);
    expect(sessionCookieOf(signedIn)).not.toBeNull();
  });

  it('checks the email: malformed addresses are a 400 form error and create nothing', async () => {
    for (const email of ['not-an-email', 'a@b@c.test', 'spaces in@test.local', `${'x'.repeat(250)}@test.local`]) {
      const answer = await signUp(email, PASSWORD, '127.0.4.2');
      expect(answer.status).toBe(400);
      expect(answer.text).toContain('Enter a valid email address.');
      expect(await usersNamed(email.toLowerCase())).toBe(0);
    }
  });

  it('rate-limits sign-up per client: the 11th attempt in an hour is 429 with Retry-After and creates nothing; another client is not affected', async () => {
    const stamp = Date.now();
    for (let i = 0; i < 10; i++) expect((await signUp(`burst-${stamp}-${i}@test.local`, PASSWORD, '127.0.4.3')).status).toBe(303);
    const limited = await signUp(`burst-${stamp}-10@test.local`, PASSWORD, '127.0.4.3');
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.text).toContain('Too many sign-ups');
    expect(await usersNamed(`burst-${stamp}-10@test.local`)).toBe(0);
    expect((await signUp(`burst-${stamp}-10@test.local`, PASSWORD, '127.0.4.4')).status).toBe(303);
  });

  it('invitations refuse an email with a user in this account or another with one message, and invite an email that has only an account', async () => {
    const users = t.get(UsersService);
    const mk = async (prefix: string) => {
      const email = `${prefix}-${Math.random().toString(36).slice(2)}@test.local`;
      const account = await t.get(AccountsService).create(email, 'pro');
      return users.create(account.id, email, 'owner');
    };
    const a = await mk('owner-a');
    const b = await mk('owner-b');
    const refusal = (email: string) =>
      users.invite(a, email).then(
        () => 'invited',
        (err: Error) => err.message,
      );
    expect(await refusal(b.email)).toBe(INVITE_REFUSED);
    expect(await refusal(a.email)).toBe(INVITE_REFUSED);
    const accountOnly = `acc-only-${Date.now()}@test.local`;
    await t.get(AccountsService).create(accountOnly, 'free');
    expect(await refusal(accountOnly)).toBe('invited');
  });
});
