import { buildAdminProgram } from '../../src/cli/admin-commands';
import { startTestApp, TestApp } from '../support/test-app';

describe('admin CLI (--json output per CONTRACT.md)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ runProcessors: false });
  });
  afterAll(() => t.close());

  /** Runs one CLI command against the test app and returns the JSON it printed. */
  async function cli(...args: string[]): Promise<any> {
    const printed: string[] = [];
    const program = buildAdminProgram(
      async () => t.app,
      (json) => (obj, text) => printed.push(json ? JSON.stringify(obj) : text),
    );
    for (const command of [program, ...program.commands]) command.exitOverride().configureOutput({ writeErr: () => undefined });
    await program.parseAsync(['node', 'glimpse', ...args, '--json']);
    expect(printed).toHaveLength(1);
    return JSON.parse(printed[0]);
  }

  it('creates an account, changes its plan, creates, lists and revokes keys', async () => {
    const email = `Cli-${Date.now()}@Example.com`;
    const account = await cli('account:create', '--email', email, '--plan', 'starter');
    expect(account).toEqual({ id: expect.stringMatching(/^acc_[0-9A-Za-z]{24}$/), email: email.toLowerCase(), plan: 'starter' });

    expect(await cli('account:plan', '--account', email, '--plan', 'legacy_free')).toEqual({ ...account, plan: 'legacy_free' });

    const key = await cli('key:create', '--account', account.id, '--name', 'production');
    expect(key).toEqual({
      id: expect.stringMatching(/^key_/),
      key: expect.stringMatching(/^sk_live_[0-9A-Za-z]{40}$/),
      prefix: key.key.slice(0, 12),
      accountId: account.id,
    });

    // The key works, and the accepted job shows up in this month's usage.
    const res = await t.request('POST', '/v1/screenshot', { key: key.key, body: { url: 'http://127.0.0.1:9/' } });
    expect(res.status).toBe(202);

    const listed = await cli('key:list', '--account', email);
    expect(listed).toEqual({
      data: [{ id: key.id, prefix: key.prefix, name: 'production', createdAt: expect.any(String), revokedAt: null, usedThisMonth: 1 }],
    });
    expect(JSON.stringify(listed)).not.toContain(key.key);

    const revoked = await cli('key:revoke', '--key', key.id);
    expect(revoked).toEqual({ id: key.id, revokedAt: expect.stringMatching(/Z$/) });
    expect((await t.request('GET', '/v1/screenshot/scr_x', { key: key.key })).body.code).toBe('API_KEY_REVOKED');
    expect((await cli('key:list', '--account', account.id)).data[0].revokedAt).toBe(revoked.revokedAt);
  });

  it('refuses a duplicate email, an unknown account and an unknown plan', async () => {
    const email = `dup-${Date.now()}@example.com`;
    await cli('account:create', '--email', email);
    await expect(cli('account:create', '--email', email)).rejects.toThrow(/already exists/);
    await expect(cli('key:create', '--account', 'nobody@example.com')).rejects.toThrow(/No account/);
    await expect(cli('account:create', '--email', 'x@example.com', '--plan', 'gold')).rejects.toThrow(/must be one of/);
  });
});
