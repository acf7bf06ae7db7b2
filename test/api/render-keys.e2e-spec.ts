import { DataSource } from 'typeorm';
import { startTestApp, TestApp } from '../support/test-app';

/** Render keys (CONTRACT.md, "Render links" and "Organizations and plan limits"). */
describe('render keys', () => {
  let t: TestApp;
  let key: string;
  let keyId: string;

  beforeAll(async () => {
    t = await startTestApp({ runProcessors: false, env: { WEBHOOK_SECRET_KEY: 'ab'.repeat(32) } });
    ({ key, keyId } = await t.createKey('starter'));
  });

  afterAll(async () => {
    await t.close();
  });

  it('creates a key bound to the calling API key, shows the secret once and stores it sealed', async () => {
    const res = await t.request('POST', '/v1/render-keys', {
      key,
      body: { description: 'og', allowedHosts: ['example.com', '*.example.org'] },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^rk_[0-9A-Za-z]{24}$/),
      secret: expect.stringMatching(/^rks_[0-9A-Za-z]{32,}$/),
      apiKeyId: keyId,
      description: 'og',
      allowedHosts: ['example.com', '*.example.org'],
      createdAt: expect.any(String),
    });
    const list = await t.request('GET', '/v1/render-keys', { key });
    expect(list.status).toBe(200);
    expect(list.body.data).toContainEqual({
      id: res.body.id,
      apiKeyId: keyId,
      description: 'og',
      allowedHosts: ['example.com', '*.example.org'],
      createdAt: res.body.createdAt,
    });
    expect(JSON.stringify(list.body)).not.toContain(res.body.secret);
    const [row] = await t.get(DataSource).query('SELECT secret_sealed FROM render_keys WHERE id = $1', [res.body.id]);
    expect(row.secret_sealed).not.toContain(res.body.secret.slice(4));
  });

  it.each([
    [{ allowedHosts: ['*.*.example.com'] }, 'allowedHosts'],
    [{ allowedHosts: ['Example.com'] }, 'allowedHosts'],
    [{ allowedHosts: ['example.com/path'] }, 'allowedHosts'],
    [{ allowedHosts: Array.from({ length: 51 }, (_, i) => `h${i}.example.com`) }, 'allowedHosts'],
    [{ description: 'x'.repeat(501) }, 'description'],
    [{ secret: 'mine' }, 'secret'],
  ])('refuses %j with 400 VALIDATION_FAILED', async (body, field) => {
    const res = await t.request('POST', '/v1/render-keys', { key, body });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_FAILED');
    expect(res.body.details.fields[0].field).toBe(field);
  });

  it("rotates: a new secret; 404 for an unknown or another account's key; deletes with 204", async () => {
    const created = await t.request('POST', '/v1/render-keys', { key, body: {} });
    const rotated = await t.request('POST', `/v1/render-keys/${created.body.id}/rotate`, { key, body: { expiresInSeconds: 60 } });
    expect(rotated.status).toBe(200);
    expect(rotated.body).toEqual({ id: created.body.id, secret: expect.stringMatching(/^rks_[0-9A-Za-z]{32,}$/) });
    expect(rotated.body.secret).not.toBe(created.body.secret);
    const other = await t.createKey();
    expect((await t.request('POST', `/v1/render-keys/${created.body.id}/rotate`, { key: other.key, body: {} })).status).toBe(404);
    expect((await t.request('DELETE', `/v1/render-keys/${created.body.id}`, { key: other.key })).status).toBe(404);
    expect((await t.request('POST', '/v1/render-keys/nonsense/rotate', { key, body: {} })).status).toBe(404);
    expect(
      (await t.request('POST', `/v1/render-keys/${created.body.id}/rotate`, { key, body: { expiresInSeconds: 604_801 } })).status,
    ).toBe(400);
    expect((await t.request('DELETE', `/v1/render-keys/${created.body.id}`, { key })).status).toBe(204);
    expect((await t.request('DELETE', `/v1/render-keys/${created.body.id}`, { key })).status).toBe(404);
  });

  it('replays a create with the same Idempotency-Key: one key, the same secret', async () => {
    const headers = { 'idempotency-key': `rk-${Date.now()}` };
    const first = await t.request('POST', '/v1/render-keys', { key, body: { description: 'idem' }, headers });
    const again = await t.request('POST', '/v1/render-keys', { key, body: { description: 'idem' }, headers });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotency-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
  });

  it('stops at the plan limit (free: 2) with 403 PLAN_LIMIT_REACHED, even under concurrency', async () => {
    const free = await t.createKey('free');
    const answers = await Promise.all(Array.from({ length: 5 }, () => t.request('POST', '/v1/render-keys', { key: free.key, body: {} })));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(2);
    const refused = answers.filter((a) => a.status === 403);
    expect(refused).toHaveLength(3);
    expect(refused[0].body).toMatchObject({ code: 'PLAN_LIMIT_REACHED', details: { resource: 'render_keys', limit: 2, plan: 'free' } });
  });
});
