import { createHmac } from 'node:crypto';
import { DataSource } from 'typeorm';
import { startTestApp, TestApp } from '../support/test-app';

/** RFC 3986 percent-encoding, written here independently of the server's. */
const enc = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());

/** A signed render link as CONTRACT.md "Render links" describes it. */
function signedLink(base: string, keyId: string, secret: string, params: Record<string, string>): string {
  const path = `/v1/render/${keyId}.png`;
  const canonical = Object.entries(params)
    .map(([n, v]) => `${enc(n)}=${enc(v)}`)
    .sort()
    .join('&');
  const signature = createHmac('sha256', secret).update(`GET\n${path}\n${canonical}`).digest('hex');
  return `${base}${path}?${canonical}&signature=${signature}`;
}

/**
 * Render links take the options of `POST /v1/screenshot` except `format`, `cache` and `extract`
 * (CONTRACT.md, "Render links"): a correctly signed link carrying one is refused with 400
 * `VALIDATION_FAILED` naming it, before any job is made or anything counted. No processors run here: a
 * link that were accepted would make a job and wait (RENDER_WAIT_MS, 1 s) for it in vain.
 */
describe('render link options', () => {
  let t: TestApp;
  let rk: { id: string; secret: string };
  let keyId: string;

  beforeAll(async () => {
    t = await startTestApp({ runProcessors: false, env: { RENDER_WAIT_MS: '1000' } });
    const created = await t.createKey('pro');
    keyId = created.keyId;
    rk = (await t.request('POST', '/v1/render-keys', { key: created.key, body: {} })).body;
  });

  afterAll(async () => {
    await t.close();
  });

  it.each([
    ['extract', '["markdown"]'],
    ['extract', '["metadata","links"]'],
    ['format', 'png'],
    ['format', 'jpeg'],
    ['cache', 'true'],
    ['cache', 'false'],
  ])('refuses %s=%s with 400 VALIDATION_FAILED naming it, no job, nothing counted', async (name, value) => {
    const res = await fetch(signedLink(t.baseUrl, rk.id, rk.secret, { url: 'https://example.com/', width: '800', [name]: value }));
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body.code).toBe('VALIDATION_FAILED');
    expect(body.details.fields).toEqual([{ field: name, message: expect.stringContaining(name) }]);
    const [{ jobs }] = await t.get(DataSource).query('SELECT count(*)::int AS jobs FROM screenshot_jobs');
    expect(jobs).toBe(0);
    const [{ used }] = await t
      .get(DataSource)
      .query('SELECT coalesce(sum(used), 0)::int AS used FROM quota_usage WHERE api_key_id = $1', [keyId]);
    expect(used).toBe(0);
  });
});
