import { DataSource } from 'typeorm';
import { Glimpse } from '../../openapi/sdk-typescript/src';
import { utcMonthOf } from '../../src/common/utc-month';
import { pngSize } from '../support/images';
import { PageServer, startPageServer } from '../support/page-server';
import { startTestApp, TestApp, waitForJob } from '../support/test-app';

describe('capture cache and batches (CONTRACT.md "Capture options": cache, "Batches")', () => {
  let t: TestApp;
  let db: DataSource;
  let pages: PageServer;
  /** Page loads per path. */
  const loads = new Map<string, number>();

  beforeAll(async () => {
    const page = (path: string, colour: string) => (_req: unknown, res: import('node:http').ServerResponse) => {
      loads.set(path, (loads.get(path) ?? 0) + 1);
      res.writeHead(200, { 'content-type': 'text/html' }).end(`<body style="margin:0;background:${colour}">${path}</body>`);
    };
    pages = await startPageServer({ '/a': page('/a', 'rgb(255,0,0)'), '/b': page('/b', 'rgb(0,128,0)'), '/c': page('/c', 'rgb(0,0,255)') });
    t = await startTestApp();
    db = t.get(DataSource);
  });

  afterAll(async () => {
    await t?.close();
    await pages?.close();
  });

  async function usage(keyId: string): Promise<number> {
    const rows = await db.query(`SELECT used FROM quota_usage WHERE api_key_id = $1 AND month = $2`, [keyId, utcMonthOf(new Date()).month]);
    return rows.length ? rows[0].used : 0;
  }

  async function jobCount(keyId: string): Promise<number> {
    const [{ count }] = await db.query(`SELECT COUNT(*)::int AS count FROM screenshot_jobs WHERE api_key_id = $1`, [keyId]);
    return count;
  }

  async function file(url: string): Promise<Buffer> {
    const res = await fetch(url);
    expect(res.status).toBe(200);
    return Buffer.from(await res.arrayBuffer());
  }

  describe('cache', () => {
    it('answers a second identical request from the cache: cached true, done at once, its own result URL, counted once', async () => {
      const { key, keyId } = await t.createKey();
      const body = { url: `${pages.url}/a`, width: 300, height: 200, cache: true };
      const first = await t.request('POST', '/v1/screenshot', { key, body });
      expect(first.status).toBe(202);
      expect(first.body.cached).toBe(false);
      const original = await waitForJob(t, key, first.body.id);
      expect(original).toMatchObject({ status: 'done', cached: false });
      expect(await usage(keyId)).toBe(1);
      const loadsBefore = loads.get('/a');

      const started = performance.now();
      // The same URL written another way (WHATWG serialisation makes them equal).
      const second = await t.request('POST', '/v1/screenshot', { key, body: { ...body, url: `${pages.url.replace('http', 'HTTP')}/./a` } });
      expect(second.status).toBe(202);
      expect(second.body).toMatchObject({ status: 'pending', cached: true });
      const hit = (await t.request('GET', `/v1/screenshot/${second.body.id}`, { key })).body;
      const elapsedMs = performance.now() - started;
      expect(hit).toMatchObject({ status: 'done', cached: true, error: null });
      expect(elapsedMs).toBeLessThan(1000); // no capture: a capture takes a browser page load
      expect(hit.url).not.toBe(original.url);
      expect(await file(hit.url)).toEqual(await file(original.url));
      expect(loads.get('/a')).toBe(loadsBefore);
      expect(await usage(keyId)).toBe(1);
      expect(second.headers.get('x-ratelimit-remaining')).toBe(first.headers.get('x-ratelimit-remaining'));

      // Other options are another capture.
      const other = await t.request('POST', '/v1/screenshot', { key, body: { ...body, width: 301 } });
      expect(other.body.cached).toBe(false);
      await waitForJob(t, key, other.body.id);
      expect(await usage(keyId)).toBe(2);
    });

    it("never gives one account another account's capture", async () => {
      const a = await t.createKey();
      const b = await t.createKey();
      const body = { url: `${pages.url}/b`, width: 320, height: 200, cache: true };
      const first = await t.request('POST', '/v1/screenshot', { key: a.key, body });
      await waitForJob(t, a.key, first.body.id);
      const before = loads.get('/b');
      const stranger = await t.request('POST', '/v1/screenshot', { key: b.key, body });
      expect(stranger.body.cached).toBe(false);
      expect(await waitForJob(t, b.key, stranger.body.id)).toMatchObject({ status: 'done', cached: false });
      expect(loads.get('/b')).toBe((before ?? 0) + 1);
      expect(await usage(b.keyId)).toBe(1);
    });

    it('captures afresh once the cached capture is older than cacheTtl', async () => {
      const { key, keyId } = await t.createKey();
      const body = { url: `${pages.url}/c`, width: 330, height: 200, cache: true, cacheTtl: 3600 };
      const first = await t.request('POST', '/v1/screenshot', { key, body });
      await waitForJob(t, key, first.body.id);
      // The capture completed two hours ago.
      await db.query(`UPDATE screenshot_jobs SET completed_at = completed_at - interval '2 hours' WHERE id = $1`, [first.body.id]);
      const expired = await t.request('POST', '/v1/screenshot', { key, body });
      expect(expired.body.cached).toBe(false);
      expect(await waitForJob(t, key, expired.body.id)).toMatchObject({ status: 'done', cached: false });
      expect(await usage(keyId)).toBe(2);
      // Within a longer cacheTtl the old capture is still good.
      const longer = await t.request('POST', '/v1/screenshot', { key, body: { ...body, cacheTtl: 4 * 3600 } });
      expect(longer.body.cached).toBe(true);
    });
  });

  describe('POST /v1/screenshot/batch', () => {
    it('creates one job per item in order, each ends done; the SDK waits for them all', async () => {
      const { key, keyId } = await t.createKey();
      const items = [
        { url: `${pages.url}/a`, width: 200, height: 100 },
        { url: `${pages.url}/b`, width: 210, height: 100 },
        { url: `${pages.url}/c`, width: 220, height: 100, format: 'pdf' as const },
      ];
      const glimpse = new Glimpse({ baseUrl: t.baseUrl, apiKey: key });
      const jobs = await glimpse.screenshots.batch(items);
      expect(jobs.map((j) => [j.status, j.width, j.format])).toEqual([
        ['pending', 200, 'png'],
        ['pending', 210, 'png'],
        ['pending', 220, 'pdf'],
      ]);
      expect(new Set(jobs.map((j) => j.id)).size).toBe(3);
      expect(await usage(keyId)).toBe(3);
      const done = await Promise.all(jobs.map((j) => glimpse.screenshots.waitFor(j.id, { intervalMs: 50, timeoutMs: 30_000 })));
      expect(done.map((j) => j.status)).toEqual(['done', 'done', 'done']);
      expect(pngSize(await file(done[1].url!))).toEqual({ width: 210, height: 100 });
      expect((await file(done[2].url!)).subarray(0, 5).toString('latin1')).toBe('%PDF-');
    });

    it('refuses the whole batch for one bad item, naming items[1].url, and creates nothing', async () => {
      const { key, keyId } = await t.createKey();
      const res = await t.request('POST', '/v1/screenshot/batch', {
        key,
        body: { items: [{ url: `${pages.url}/a` }, { url: 'ftp://example.com/' }, { url: `${pages.url}/c`, quality: 50 }] },
      });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('VALIDATION_FAILED');
      const fields = res.body.details.fields.map((f: { field: string }) => f.field);
      expect(fields).toContain('items[1].url');
      expect(await jobCount(keyId)).toBe(0);
      expect(await usage(keyId)).toBe(0);

      const conflict = await t.request('POST', '/v1/screenshot/batch', {
        key,
        body: { items: [{ url: `${pages.url}/a` }, { url: `${pages.url}/c`, quality: 50 }] },
      });
      expect(conflict.status).toBe(400);
      expect(conflict.body.details.fields.map((f: { field: string }) => f.field)).toEqual(['items[1].quality']);

      expect((await t.request('POST', '/v1/screenshot/batch', { key, body: { items: [] } })).status).toBe(400);
      const tooMany = Array.from({ length: 101 }, () => ({ url: `${pages.url}/a` }));
      expect((await t.request('POST', '/v1/screenshot/batch', { key, body: { items: tooMany } })).status).toBe(400);
      expect(await jobCount(keyId)).toBe(0);
    });

    it('answers 429 with nothing counted when the quota cannot take every item', async () => {
      const { key, keyId } = await t.createKey('free');
      await db.query(`INSERT INTO quota_usage (api_key_id, month, used) VALUES ($1, $2, 98)`, [keyId, utcMonthOf(new Date()).month]);
      const items = [{ url: `${pages.url}/a` }, { url: `${pages.url}/b` }, { url: `${pages.url}/c` }];
      const refused = await t.request('POST', '/v1/screenshot/batch', { key, body: { items } });
      expect(refused.status).toBe(429);
      expect(refused.body.code).toBe('PLAN_QUOTA_EXCEEDED');
      expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(await usage(keyId)).toBe(98);
      expect(await jobCount(keyId)).toBe(0);

      const fits = await t.request('POST', '/v1/screenshot/batch', { key, body: { items: items.slice(0, 2) } });
      expect(fits.status).toBe(202);
      expect(await usage(keyId)).toBe(100);
    });

    it('replays a batch with the same Idempotency-Key: same jobs, counted once', async () => {
      const { key, keyId } = await t.createKey();
      const body = { items: [{ url: `${pages.url}/a` }, { url: `${pages.url}/b` }] };
      const headers = { 'Idempotency-Key': `batch-replay-${Date.now()}` };
      const first = await t.request('POST', '/v1/screenshot/batch', { key, body, headers });
      expect(first.status).toBe(202);
      const replay = await t.request('POST', '/v1/screenshot/batch', { key, body, headers });
      expect(replay.status).toBe(202);
      expect(replay.headers.get('idempotency-replayed')).toBe('true');
      expect(replay.body).toEqual(first.body);
      expect(await usage(keyId)).toBe(2);
      expect(await jobCount(keyId)).toBe(2);
    });
  });
});
