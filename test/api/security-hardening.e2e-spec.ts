import { readFileSync } from 'node:fs';
import { DataSource } from 'typeorm';
import { AccountsService } from '../../src/accounts/accounts.service';
import { UsersService } from '../../src/accounts/users.service';
import { postForm } from '../support/dashboard-forms';
import { startTestApp, TestApp } from '../support/test-app';

/** Low findings of the security review: invalid Unicode refused, no live set-password token in logs. */
describe('security hardening', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ runProcessors: false, env: { WEBHOOK_ALLOW_HTTP: 'true' } });
  });

  afterAll(async () => {
    await t?.close();
  });

  it('a lone surrogate (\\ud800) in a JSON body is 400 VALIDATION_FAILED naming the field, and nothing is stored', async () => {
    const { key, accountId } = await t.createKey('pro');
    const hook = await t.request('POST', '/v1/webhooks', {
      key,
      body: '{"url":"http://127.0.0.1:9/h","description":"bad \\ud800 text"}',
      headers: { 'content-type': 'application/json' },
    });
    expect(hook.status).toBe(400);
    expect(hook.body).toMatchObject({
      code: 'VALIDATION_FAILED',
      details: { fields: [{ field: 'description', message: expect.stringContaining('Unicode') }] },
    });
    const shot = await t.request('POST', '/v1/screenshot', {
      key,
      body: '{"url":"http://127.0.0.1:9/\\udc00"}',
      headers: { 'content-type': 'application/json' },
    });
    expect(shot.status).toBe(400);
    expect(shot.body.code).toBe('VALIDATION_FAILED');
    const db = t.get(DataSource);
    expect((await db.query(`SELECT count(*)::int AS n FROM webhook_endpoints WHERE account_id = $1`, [accountId]))[0].n).toBe(0);
    // A paired surrogate (an emoji) is text like any other.
    const emoji = await t.request('POST', '/v1/webhooks', { key, body: { url: 'http://127.0.0.1:9/h', description: 'ok \ud83d\ude00' } });
    expect(emoji.status).toBe(201);
    expect(emoji.body.description).toBe('ok \ud83d\ude00');
  });

  it('a 500 on the set-password route does not write the live token to the log', async () => {
    const email = `log-${Math.random().toString(36).slice(2)}@test.local`;
    const account = await t.get(AccountsService).create(email, 'free');
    const { setPasswordUrl } = await t.get(UsersService).create(account.id, email, 'owner');
    const token = setPasswordUrl.split('/').pop()!;
    const spy = jest.spyOn(t.get(UsersService), 'setPasswordWithLink').mockRejectedValueOnce(new Error('unexpected failure for the test'));
    try {
      const answer = await postForm(t.baseUrl, `/dashboard/set-password/${token}`, {
        password: 'a long enough passphrase',
        confirmPassword: 'a long enough passphrase',
      });
      expect(answer.status).toBe(500);
    } finally {
      spy.mockRestore();
    }
    // The failure is logged (written asynchronously): wait for its line, then look for the token.
    const deadline = Date.now() + 10_000;
    let log = '';
    while (Date.now() < deadline && !/set-password\/\[REDACTED\] failed/.test(log)) {
      await new Promise((r) => setTimeout(r, 50));
      log = readFileSync(t.logFile, 'utf8');
    }
    expect(log).toMatch(/set-password\/\[REDACTED\] failed/);
    expect(log).not.toContain(token);
  });
});
