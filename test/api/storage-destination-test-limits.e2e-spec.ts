import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';
import { EndlessAnswer, startEndlessEndpoint } from '../support/endless-endpoint';
import { startTestApp, TestApp } from '../support/test-app';

const BUCKET = 'customer-bucket';

/**
 * `POST /v1/storage-destinations/:id/test` against customer-chosen endpoints (CONTRACT.md, "Tenancy:
 * fair share and isolation", customer-chosen endpoints; "Storage destinations"): an S3 endpoint whose
 * answer never ends is read to 1 MiB, its connection closed, and the test answers `ok: false`; a
 * destination may be tested 10 times a minute, the 11th is 429 `RATE_LIMITED` and reaches no bucket.
 * A real S3 (s3rver) on loopback where one is needed.
 */
describe('storage destination tests: bounded answers, 10 per minute', () => {
  let t: TestApp;
  let key: string;
  let s3server: S3rver;
  let s3dir: string;
  let s3endpoint: string;
  let endless: Awaited<ReturnType<typeof startEndlessEndpoint>>;

  const destination = async (endpoint: string): Promise<string> => {
    const res = await t.request('POST', '/v1/storage-destinations', {
      key,
      body: { type: 's3', bucket: BUCKET, endpoint, forcePathStyle: true, accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    });
    expect(res.status).toBe(201);
    return res.body.id;
  };

  beforeAll(async () => {
    s3dir = mkdtempSync(join(tmpdir(), 'glimpse-dst-limits-'));
    s3server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: s3dir, configureBuckets: [{ name: BUCKET }] });
    const { port } = await s3server.run();
    s3endpoint = `http://127.0.0.1:${port}`;
    endless = await startEndlessEndpoint();
    t = await startTestApp();
    ({ key } = await t.createKey('pro'));
  });

  afterAll(async () => {
    await t?.close();
    await endless?.close();
    await s3server?.close();
    rmSync(s3dir, { recursive: true, force: true });
  });

  it('an S3 endpoint whose answer never ends: ok false at once, the connection closed after about 1 MiB, memory bounded', async () => {
    const id = await destination(endless.url);
    const before = process.memoryUsage();
    let peak = 0;
    const sampler = setInterval(() => {
      const now = process.memoryUsage();
      peak = Math.max(peak, now.arrayBuffers - before.arrayBuffers + (now.heapUsed - before.heapUsed));
    }, 2);
    let res: Awaited<ReturnType<TestApp['request']>>;
    try {
      res = await t.request('POST', `/v1/storage-destinations/${id}/test`, { key });
    } finally {
      clearInterval(sampler);
    }
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: false, error: "the endpoint's answer was larger than 1 MiB" });
    const answers: EndlessAnswer[] = await Promise.all(endless.answers);
    // The PutObject only: the object was never confirmed, so nothing is deleted.
    expect(answers.map((a) => a.method)).toEqual(['PUT']);
    // Closed by the service, not by the endpoint giving up: 1 MiB read, plus what the sockets buffer on loopback.
    expect(answers[0].closedByClient).toBe(true);
    expect(answers[0].written).toBeLessThanOrEqual(16 * 1024 * 1024);
    expect(peak).toBeLessThan(48 * 1024 * 1024);
  });

  it('at most 10 tests per destination per minute: the 11th is 429 RATE_LIMITED with Retry-After and reaches no bucket', async () => {
    const id = await destination(s3endpoint);
    const other = await destination(s3endpoint);
    const counted: string[] = [];
    // s3rver announces each object written or deleted (its S3 event notifications).
    (s3server as unknown as EventEmitter).on('event', (e: { Records: { eventName: string }[] }) =>
      counted.push(...e.Records.map((r) => r.eventName)),
    );
    for (let i = 0; i < 10; i++) {
      const res = await t.request('POST', `/v1/storage-destinations/${id}/test`, { key });
      expect([res.status, res.body]).toEqual([200, { ok: true, error: null }]);
    }
    const writesBefore = counted.length;
    const refused = await t.request('POST', `/v1/storage-destinations/${id}/test`, { key });
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({
      code: 'RATE_LIMITED',
      error: expect.stringMatching(/^Too many tests: a storage destination may be tested 10 times per minute; retry after \d+ s$/),
      details: { limit: 10, windowSeconds: 60 },
    });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(counted.length).toBe(writesBefore);
    // Per destination: another one of the same account is still tested.
    const otherTest = await t.request('POST', `/v1/storage-destinations/${other}/test`, { key });
    expect([otherTest.status, otherTest.body]).toEqual([200, { ok: true, error: null }]);
  });
});
