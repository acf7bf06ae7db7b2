import { GetObjectCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';
import { DataSource } from 'typeorm';
import { Clock } from '../../src/common/clock';
import { HousekeepingProcessor } from '../../src/screenshots/housekeeping.processor';
import { pngSize } from '../support/images';
import { PageServer, startPageServer } from '../support/page-server';
import { startTestApp, TestApp, waitForJob } from '../support/test-app';

/** A clock the test moves by hand. */
class ManualClock extends Clock {
  offsetMs = 0;
  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }
}

const DAY_S = 24 * 3600;
const BUCKET = 'glimpse-results';

/**
 * CONTRACT.md, "Result files", for both storage drivers: the local directory and an S3-compatible
 * bucket (s3rver, a real S3 HTTP server, on loopback).
 */
describe.each(['local', 's3'] as const)('result files on %s storage', (driver) => {
  const clock = new ManualClock();
  let t: TestApp;
  let pages: PageServer;
  let s3server: S3rver | null = null;
  let s3dir = '';
  let s3: S3Client | null = null;
  let key: string;

  beforeAll(async () => {
    pages = await startPageServer({ '/page': '<html><body style="margin:0;background:#1e90ff">result</body></html>' });
    let env: Record<string, string> = {};
    if (driver === 's3') {
      s3dir = mkdtempSync(join(tmpdir(), 'glimpse-s3-'));
      s3server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: s3dir, configureBuckets: [{ name: BUCKET }] });
      const { port } = await s3server.run();
      const endpoint = `http://127.0.0.1:${port}`;
      env = {
        STORAGE_DRIVER: 's3',
        S3_BUCKET: BUCKET,
        S3_ENDPOINT: endpoint,
        S3_REGION: 'us-east-1',
        S3_ACCESS_KEY_ID: 'S3RVER',
        S3_SECRET_ACCESS_KEY: 'S3RVER',
        S3_FORCE_PATH_STYLE: 'true',
      };
      s3 = new S3Client({
        region: 'us-east-1',
        endpoint,
        forcePathStyle: true,
        credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
      });
    }
    t = await startTestApp({ env, override: (b) => b.overrideProvider(Clock).useValue(clock) });
    ({ key } = await t.createKey());
  });
  afterAll(async () => {
    await t.close();
    await pages.close();
    s3?.destroy();
    await s3server?.close();
    if (s3dir) rmSync(s3dir, { recursive: true, force: true });
  });

  async function capture(): Promise<{ id: string; url: string; name: string }> {
    const res = await t.request('POST', '/v1/screenshot', { key, body: { url: `${pages.url}/page`, width: 640, height: 480 } });
    expect(res.status).toBe(202);
    const job = await waitForJob(t, key, res.body.id);
    expect(job.status).toBe('done');
    expect(job.url).toMatch(new RegExp(`^${t.baseUrl}/files/[A-Za-z0-9_-]{43}\\.png$`));
    return { id: job.id, url: job.url, name: job.url.split('/').pop() };
  }

  it('serves the result with type, length, ETag, private caching until expiry, nosniff and a sandbox CSP', async () => {
    const { url, name } = await capture();
    const res = await fetch(url);
    expect(res.status).toBe(200);
    const body = Buffer.from(await res.arrayBuffer());
    expect(pngSize(body)).toEqual({ width: 640, height: 480 });
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(res.headers.get('content-length')).toBe(String(body.length));
    expect(res.headers.get('etag')).toMatch(/^"[^"]+"$/);
    expect(res.headers.get('accept-ranges')).toBe('bytes');
    const maxAge = Number(/^private, max-age=(\d+)$/.exec(res.headers.get('cache-control') ?? '')?.[1]);
    expect(maxAge).toBeGreaterThan(30 * DAY_S - 120);
    expect(maxAge).toBeLessThanOrEqual(30 * DAY_S);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");

    if (s3) {
      // The bytes live in the bucket, under the file's name.
      const object = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: name }));
      expect(object.ContentType).toBe('image/png');
      expect(Buffer.from(await object.Body!.transformToByteArray())).toEqual(body);
    }
  });

  it('answers If-None-Match with 304 and Range with 206 (416 when unsatisfiable)', async () => {
    const { url } = await capture();
    const full = await fetch(url);
    const body = Buffer.from(await full.arrayBuffer());
    const etag = full.headers.get('etag') as string;

    const notModified = await fetch(url, { headers: { 'if-none-match': etag } });
    expect(notModified.status).toBe(304);
    expect(notModified.headers.get('etag')).toBe(etag);
    expect((await notModified.arrayBuffer()).byteLength).toBe(0);

    const head = await fetch(url, { headers: { range: 'bytes=0-7' } });
    expect(head.status).toBe(206);
    expect(head.headers.get('content-range')).toBe(`bytes 0-7/${body.length}`);
    expect(head.headers.get('content-length')).toBe('8');
    expect(Buffer.from(await head.arrayBuffer())).toEqual(body.subarray(0, 8));

    const tail = await fetch(url, { headers: { range: 'bytes=-100' } });
    expect(tail.status).toBe(206);
    expect(Buffer.from(await tail.arrayBuffer())).toEqual(body.subarray(body.length - 100));

    const beyond = await fetch(url, { headers: { range: `bytes=${body.length}-` } });
    expect(beyond.status).toBe(416);
    expect(beyond.headers.get('content-range')).toBe(`bytes */${body.length}`);
  });

  it('is 404 past RESULT_TTL_DAYS and deleted from the store by the sweep, found by job row', async () => {
    const { id, url, name } = await capture();
    expect((await fetch(url)).status).toBe(200);
    clock.offsetMs = 29 * DAY_S * 1000;
    try {
      const late = await fetch(url);
      expect(late.status).toBe(200);
      expect(Number(/max-age=(\d+)/.exec(late.headers.get('cache-control') ?? '')?.[1])).toBeLessThanOrEqual(DAY_S);
      clock.offsetMs = 31 * DAY_S * 1000;
      expect((await fetch(url)).status).toBe(404);
      // This sweep, or the periodic one that may have run since the clock moved, marked the job row.
      await t.get(HousekeepingProcessor).sweep();
      const [row] = await t.get(DataSource).query('SELECT result_deleted_at FROM screenshot_jobs WHERE id = $1', [id]);
      expect(row.result_deleted_at).not.toBeNull();
    } finally {
      clock.offsetMs = 0;
    }
    expect((await fetch(url)).status).toBe(404);
    if (s3) {
      await expect(s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: name }))).rejects.toMatchObject({
        $metadata: { httpStatusCode: 404 },
      });
    }
  });

  it("an animated capture's video and poster are result files too: Range answers 206, so <video> can seek", async () => {
    const body = { url: `${pages.url}/page`, width: 320, height: 200, format: 'webm', animation: { durationMs: 1000, fps: 5 } };
    const res = await t.request('POST', '/v1/screenshot', { key, body });
    const job = await waitForJob(t, key, res.body.id, 60_000);
    expect(job.url).toMatch(/\.webm$/);
    const whole = Buffer.from(await (await fetch(job.url)).arrayBuffer());
    const part = await fetch(job.url, { headers: { range: 'bytes=0-3' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-type')).toBe('video/webm');
    expect(part.headers.get('content-range')).toBe(`bytes 0-3/${whole.length}`);
    expect(Buffer.from(await part.arrayBuffer()).toString('hex')).toBe('1a45dfa3');
    const poster = await fetch(job.thumbnailUrl, { headers: { range: 'bytes=1-3' } });
    expect(poster.status).toBe(206);
    expect(Buffer.from(await poster.arrayBuffer()).toString('latin1')).toBe('PNG');
  });

  it('answers 404 for unknown and malformed names', async () => {
    expect((await fetch(`${t.baseUrl}/files/${'A'.repeat(43)}.png`)).status).toBe(404);
    expect((await fetch(`${t.baseUrl}/files/..%2F..%2Fetc%2Fpasswd`)).status).toBe(404);
  });
});
