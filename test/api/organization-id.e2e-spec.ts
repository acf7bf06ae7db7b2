import { DataSource } from 'typeorm';
import { startTestApp, TestApp } from '../support/test-app';

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/**
 * CONTRACT.md, "Organizations and plan limits": an account is an organization; an `X-Organization-ID`
 * naming another account than the API key's is 403 ORGANIZATION_MISMATCH and nothing is done, on REST
 * and on the MCP endpoint.
 */
describe('X-Organization-ID names the API key’s account', () => {
  let t: TestApp;
  let a: { key: string; accountId: string };
  let b: { key: string; accountId: string };
  const body = { url: 'http://127.0.0.1:9/org' };

  beforeAll(async () => {
    t = await startTestApp({ runProcessors: false, env: { WEBHOOK_ALLOW_HTTP: 'true' } });
    a = await t.createKey('free');
    b = await t.createKey('free');
  });

  afterAll(async () => {
    await t?.close();
  });

  const jobsOf = async (accountId: string) =>
    (
      await t
        .get(DataSource)
        .query(`SELECT count(*)::int AS n FROM screenshot_jobs j JOIN api_keys k ON k.id = j.api_key_id WHERE k.account_id = $1`, [
          accountId,
        ])
    )[0].n as number;

  it('another account’s id is 403 ORGANIZATION_MISMATCH before anything is done: no job, no quota, no endpoint', async () => {
    const before = await t.request('GET', '/v1/quota', { key: a.key });
    for (const org of [b.accountId, 'acc_000000000000000000000000', 'acc_nope12']) {
      const res = await t.request('POST', '/v1/screenshot', { key: a.key, body, headers: { 'X-Organization-ID': org } });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: expect.any(String), code: 'ORGANIZATION_MISMATCH', requestId: res.headers.get('x-request-id') });
      expect(res.body.error).not.toContain(b.accountId);
      const hook = await t.request('POST', '/v1/webhooks', {
        key: a.key,
        body: { url: 'http://127.0.0.1:9/x' },
        headers: { 'X-Organization-ID': org },
      });
      expect(hook.status).toBe(403);
      expect((await t.request('GET', '/v1/webhooks', { key: a.key, headers: { 'X-Organization-ID': org } })).status).toBe(403);
    }
    expect(await jobsOf(a.accountId)).toBe(0);
    expect((await t.request('GET', '/v1/webhooks', { key: a.key })).body.data).toEqual([]);
    const after = await t.request('GET', '/v1/quota', { key: a.key });
    expect(after.body.used).toBe(before.body.used);
  });

  it('the key’s own account id, another well-formed value, or no header: as before', async () => {
    for (const headers of [{ 'X-Organization-ID': a.accountId }, { 'X-Organization-ID': 'org_12' }, {}] as Record<string, string>[]) {
      const res = await t.request('POST', '/v1/screenshot', { key: a.key, body, headers });
      expect(res.status).toBe(202);
    }
    expect(await jobsOf(a.accountId)).toBe(3);
  });

  it('MCP: another account’s id is HTTP 403 with error.data.code ORGANIZATION_MISMATCH; the own id works', async () => {
    const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    const post = (headers: Record<string, string>, path = '/mcp') =>
      fetch(`${t.baseUrl}${path}`, { method: 'POST', headers: { ...MCP_HEADERS, ...headers }, body: JSON.stringify(list) }).then(
        async (r) => ({ status: r.status, body: await r.json() }),
      );
    const other = await post({ authorization: `Bearer ${a.key}`, 'x-organization-id': b.accountId });
    expect(other.status).toBe(403);
    expect(other.body.error.data).toEqual({ code: 'ORGANIZATION_MISMATCH' });
    const viaPath = await post({ 'x-organization-id': b.accountId }, `/mcp/${a.key}`);
    expect(viaPath.status).toBe(403);
    const own = await post({ authorization: `Bearer ${a.key}`, 'x-organization-id': a.accountId });
    expect(own.status).toBe(200);
    expect(own.body.result.tools.length).toBeGreaterThan(0);
  });

  it('is documented: every authenticated operation lists 403 ORGANIZATION_MISMATCH, POST /v1/webhooks 403 PLAN_LIMIT_REACHED', async () => {
    const doc = await (await fetch(`${t.baseUrl}/docs/openapi.json`)).json();
    const codesOf = (op: any, status: string) =>
      op.responses[status]?.content['application/json'].schema.allOf[1].properties.code.enum ?? [];
    expect(codesOf(doc.paths['/v1/screenshot'].post, '403')).toContain('ORGANIZATION_MISMATCH');
    expect(codesOf(doc.paths['/v1/webhooks'].post, '403')).toEqual(expect.arrayContaining(['PLAN_LIMIT_REACHED', 'ORGANIZATION_MISMATCH']));
    expect(codesOf(doc.paths['/v1/webhooks/{id}/test'].post, '429')).toContain('RATE_LIMITED');
  });
});
