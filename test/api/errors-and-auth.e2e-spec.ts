import { getQueueToken } from '@nestjs/bull';
import type { Queue } from 'bull';
import { DataSource } from 'typeorm';
import { SsrfGuard } from '../../src/egress/ssrf-guard';
import { CAPTURE_QUEUE } from '../../src/queue/queues';
import { ApiKeysService } from '../../src/auth/api-keys.service';
import { ScreenshotJob } from '../../src/screenshots/screenshot-job.entity';
import { startTestApp, TestApp } from '../support/test-app';

describe('global contract: envelope, request ids, validation, authentication', () => {
  let t: TestApp;
  let key: string;
  let accountId: string;

  beforeAll(async () => {
    // No processors: these tests are about the HTTP contract, and a queued job must stay pending.
    t = await startTestApp({ runProcessors: false });
    ({ key, accountId } = await t.createKey());
  });
  afterAll(() => t.close());

  const jobCount = () => t.get(DataSource).getRepository(ScreenshotJob).countBy({ accountId });

  function expectEnvelope(res: { status: number; headers: Headers; body: any }, status: number, code: string) {
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body).toEqual(expect.objectContaining({ code, error: expect.any(String), requestId: expect.any(String) }));
    expect(res.body.requestId).toBe(res.headers.get('x-request-id'));
  }

  describe('X-Request-ID', () => {
    it('echoes a valid incoming id and generates req_… otherwise, on success and error alike', async () => {
      const echoed = await t.request('GET', '/v1/nope', { headers: { 'X-Request-ID': 'client-req_12345' } });
      expect(echoed.headers.get('x-request-id')).toBe('client-req_12345');
      expect(echoed.body.requestId).toBe('client-req_12345');

      for (const bad of ['short', 'has spaces in it', 'x'.repeat(65)]) {
        const res = await t.request('GET', '/v1/nope', { headers: { 'X-Request-ID': bad } });
        expect(res.headers.get('x-request-id')).toMatch(/^req_[A-Za-z0-9]{20}$/);
      }
      const created = await t.request('POST', '/v1/screenshot', { key, body: { url: 'http://127.0.0.1:9/' } });
      expect(created.status).toBe(202);
      expect(created.headers.get('x-request-id')).toMatch(/^req_/);
    });
  });

  describe('authentication', () => {
    it('401 UNAUTHENTICATED without a header or with a malformed one', async () => {
      expectEnvelope(await t.request('GET', '/v1/screenshot/scr_x'), 401, 'UNAUTHENTICATED');
      for (const authorization of ['Basic abc', 'Bearer', 'Bearer a b', key]) {
        expectEnvelope(await t.request('GET', '/v1/screenshot/scr_x', { headers: { authorization } }), 401, 'UNAUTHENTICATED');
      }
    });

    it('401 INVALID_API_KEY for an unknown key, well-formed or not', async () => {
      expectEnvelope(await t.request('GET', '/v1/screenshot/scr_x', { key: 'sk_live_' + 'a'.repeat(40) }), 401, 'INVALID_API_KEY');
      expectEnvelope(await t.request('GET', '/v1/screenshot/scr_x', { key: 'not-a-key' }), 401, 'INVALID_API_KEY');
    });

    it('401 API_KEY_REVOKED on the very next request after revocation; other keys of the account keep working', async () => {
      const other = await t.get(ApiKeysService).create(accountId, 'second');
      const revoked = await t.get(ApiKeysService).create(accountId, 'to revoke');
      expect((await t.request('POST', '/v1/screenshot', { key: revoked.key, body: { url: 'http://127.0.0.1:9/' } })).status).toBe(202);
      await t.get(ApiKeysService).revoke(revoked.id);
      const res = await t.request('POST', '/v1/screenshot', { key: revoked.key, body: { url: 'http://127.0.0.1:9/' } });
      expectEnvelope(res, 401, 'API_KEY_REVOKED');
      expect((await t.request('POST', '/v1/screenshot', { key: other.key, body: { url: 'http://127.0.0.1:9/' } })).status).toBe(202);
    });

    it('stores only a SHA-256 hash and a display prefix of the secret', async () => {
      const created = await t.get(ApiKeysService).create(accountId);
      expect(created.key).toMatch(/^sk_live_[0-9A-Za-z]{40}$/);
      const rows = await t.get(DataSource).query('SELECT * FROM api_keys WHERE id = $1', [created.id]);
      expect(JSON.stringify(rows)).not.toContain(created.key);
      expect(rows[0].secret_hash).toMatch(/^[0-9a-f]{64}$/);
      expect(created.key.startsWith(rows[0].prefix)).toBe(true);
    });

    it("hides another account's job behind 404 NOT_FOUND", async () => {
      const job = await t.request('POST', '/v1/screenshot', { key, body: { url: 'http://127.0.0.1:9/' } });
      const stranger = await t.createKey();
      expectEnvelope(await t.request('GET', `/v1/screenshot/${job.body.id}`, { key: stranger.key }), 404, 'NOT_FOUND');
      expect((await t.request('GET', `/v1/screenshot/${job.body.id}`, { key })).status).toBe(200);
    });
  });

  describe('validation', () => {
    it.each([
      ['url', {}],
      ['url', { url: 'not a url' }],
      ['url', { url: 'ftp://127.0.0.1/file' }],
      ['url', { url: 'file:///etc/passwd' }],
      ['url', { url: `http://127.0.0.1/${'a'.repeat(2048)}` }],
      ['width', { url: 'http://127.0.0.1/', width: 99 }],
      ['width', { url: 'http://127.0.0.1/', width: 3841 }],
      ['width', { url: 'http://127.0.0.1/', width: 800.5 }],
      ['width', { url: 'http://127.0.0.1/', width: '800' }],
      ['height', { url: 'http://127.0.0.1/', height: 4321 }],
      ['delay', { url: 'http://127.0.0.1/', delay: -1 }],
      ['delay', { url: 'http://127.0.0.1/', delay: 10001 }],
      ['format', { url: 'http://127.0.0.1/', format: 'bmp' }],
      ['fullPage', { url: 'http://127.0.0.1/', fullPage: 'yes' }],
      ['fullpage', { url: 'http://127.0.0.1/', fullpage: true }],
    ])('400 VALIDATION_FAILED naming %s (case %#), and no job created', async (field, body) => {
      const before = await jobCount();
      const res = await t.request('POST', '/v1/screenshot', { key, body });
      expectEnvelope(res, 400, 'VALIDATION_FAILED');
      expect(res.body.details.fields).toEqual(expect.arrayContaining([expect.objectContaining({ field, message: expect.any(String) })]));
      expect(await jobCount()).toBe(before);
    });

    it('400 INVALID_JSON for a body that is not JSON', async () => {
      const res = await t.request('POST', '/v1/screenshot', { key, body: '{"url":', headers: { 'content-type': 'application/json' } });
      expectEnvelope(res, 400, 'INVALID_JSON');
    });

    it('415 UNSUPPORTED_MEDIA_TYPE for a body that is not JSON by content type', async () => {
      const res = await t.request('POST', '/v1/screenshot', {
        key,
        body: 'url=http://127.0.0.1/',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expectEnvelope(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
    });

    it('413 PAYLOAD_TOO_LARGE for an oversized body', async () => {
      const res = await t.request('POST', '/v1/screenshot', { key, body: { url: 'http://127.0.0.1/', pad: 'x'.repeat(1024 * 1024) } });
      expectEnvelope(res, 413, 'PAYLOAD_TOO_LARGE');
    });

    it('404 NOT_FOUND for an id of the wrong shape, never a 500', async () => {
      for (const id of ['nope', 'scr_', `scr_${'a'.repeat(200)}`, "scr_'; drop table x; --", 'we_abcdefghijklmnopqrstuvwx']) {
        expectEnvelope(await t.request('GET', `/v1/screenshot/${encodeURIComponent(id)}`, { key }), 404, 'NOT_FOUND');
      }
    });

    it('404 ROUTE_NOT_FOUND with the envelope for unknown routes under /v1', async () => {
      expectEnvelope(await t.request('GET', '/v1/nothing-here', { key }), 404, 'ROUTE_NOT_FOUND');
      expectEnvelope(await t.request('DELETE', '/v1/screenshot', { key }), 404, 'ROUTE_NOT_FOUND');
    });
  });

  it('accepts a valid request with every option and answers 202 pending with the job shape', async () => {
    const res = await t.request('POST', '/v1/screenshot', {
      key,
      body: { url: 'http://127.0.0.1:9/page', width: 100, height: 4320, fullPage: true, format: 'webp', delay: 10000 },
    });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^scr_[0-9A-Za-z]{24}$/),
      status: 'pending',
      url: null,
      thumbnailUrl: null,
      error: null,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      completedAt: null,
      format: 'webp',
      width: 100,
      height: 4320,
      fullPage: true,
      clipped: false,
      cached: false,
      // CONTRACT.md, "Capture options, second set" and "Extracted content": every job has both.
      targetStatus: null,
      extracted: null,
      // CONTRACT.md, "Storage destinations": where the result was delivered (null until done, and without storage/upload).
      storage: null,
      // CONTRACT.md, "Crawls": a crawl's pages name their crawl; other jobs have null.
      crawlId: null,
      options: { width: 100, height: 4320, fullPage: true, format: 'webp', delay: 10000 },
    });
    const polled = await t.request('GET', `/v1/screenshot/${res.body.id}`, { key });
    expect(polled.status).toBe(200);
    expect(polled.body).toEqual(res.body);
  });
});

describe('unexpected failures', () => {
  let t: TestApp;
  let key: string;
  let accountId: string;
  beforeAll(async () => {
    t = await startTestApp({ runProcessors: false });
    ({ key, accountId } = await t.createKey());
  });
  afterAll(() => t.close());

  it('500 INTERNAL_ERROR with nothing internal in the body, and no job left behind, on an unexpected failure', async () => {
    const guard = t.get(SsrfGuard);
    const spy = jest
      .spyOn(guard, 'assertAllowed')
      .mockRejectedValueOnce(new Error('/srv/glimpse/dist/x.js: SELECT key_hash FROM api_keys'));
    try {
      const res = await t.request('POST', '/v1/screenshot', { key, body: { url: 'http://127.0.0.1:9/' } });
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ error: 'Internal server error', code: 'INTERNAL_ERROR', requestId: res.headers.get('x-request-id') });
    } finally {
      spy.mockRestore();
    }
    expect(await t.get(DataSource).getRepository(ScreenshotJob).countBy({ accountId })).toBe(0);
  });

  it('a queue that is down fails nothing: 202, the job is stored pending for the reconciler (CONTRACT.md, Durability)', async () => {
    await t.get<Queue>(getQueueToken(CAPTURE_QUEUE)).close();
    const res = await t.request('POST', '/v1/screenshot', { key, body: { url: 'http://127.0.0.1:9/' } });
    expect(res.status).toBe(202);
    expect(await t.get(DataSource).getRepository(ScreenshotJob).findOneByOrFail({ id: res.body.id })).toMatchObject({
      status: 'pending',
      accountId,
    });
  });
});

describe('SSRF baseline with SSRF_ALLOW_PRIVATE=false (loopback targets only)', () => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    t = await startTestApp({ runProcessors: false, env: { SSRF_ALLOW_PRIVATE: 'false' } });
    ({ key } = await t.createKey());
  });
  afterAll(() => t.close());

  it.each([
    'http://127.0.0.1:9/',
    'http://[::ffff:127.0.0.1]:9/',
    'http://2130706433:9/',
    'http://localhost:9/',
    'http://[::1]:9/',
    'http://127.1:9/',
  ])('refuses %s with 400 TARGET_NOT_ALLOWED and creates no job', async (url) => {
    const res = await t.request('POST', '/v1/screenshot', { key, body: { url } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('TARGET_NOT_ALLOWED');
    expect(res.body.requestId).toBe(res.headers.get('x-request-id'));
  });
});
