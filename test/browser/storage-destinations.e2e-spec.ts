import { GetObjectCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';
import { UsersService } from '../../src/accounts/users.service';
import { PassThrough } from 'node:stream';
import { Glimpse } from '../../openapi/sdk-typescript/src';
import { main as cli } from '../../openapi/sdk-typescript/src/cli';
import { launchTestBrowser, seriousAxeViolations } from '../support/test-browser';
import { pngSize } from '../support/images';
import { PageServer, startPageServer } from '../support/page-server';
import { startTestApp, TestApp, waitForJob } from '../support/test-app';

const BUCKET = 'customer-bucket';
/** Where the Storage page's screenshots go (look at them). */
const SCREENSHOT_DIR = process.env.DASHBOARD_SCREENSHOT_DIR ?? join(tmpdir(), 'glimpse-dashboard-screenshots');

/** A presigned-URL stand-in on 127.0.0.1: records each PUT and answers with the status of its path (`/ok`, `/403`). */
interface PutReceiver {
  url: string;
  puts: { path: string; headers: IncomingHttpHeaders; body: Buffer }[];
  close(): Promise<void>;
}

async function startPutReceiver(): Promise<PutReceiver> {
  const puts: PutReceiver['puts'] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0];
      puts.push({ path, headers: req.headers, body: Buffer.concat(chunks) });
      const status = path === '/ok' ? 200 : Number(path.slice(1));
      res.writeHead(status, status === 200 ? { etag: '"receiver-etag"' } : {}).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    puts,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * CONTRACT.md, "Storage destinations": destinations (CRUD, plan limit, test), the `storage` option
 * against a real S3 HTTP server (s3rver on loopback), the `upload` option against a loopback receiver,
 * and the 400s at submission that count nothing.
 */
describe('storage destinations', () => {
  let t: TestApp;
  let pages: PageServer;
  let s3server: S3rver;
  let s3dir: string;
  let s3: S3Client;
  let endpoint: string;
  let receiver: PutReceiver;
  let key: string;
  let accountId: string;
  let destinationId: string;

  const destinationBody = (overrides: Record<string, unknown> = {}) => ({
    type: 's3',
    bucket: BUCKET,
    region: 'us-east-1',
    endpoint,
    forcePathStyle: true,
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    prefix: 'glimpse/',
    description: 'test bucket',
    ...overrides,
  });

  beforeAll(async () => {
    pages = await startPageServer({
      '/page': '<html><head><title>Stored</title></head><body style="margin:0;background:#2e8b57"><h1>Stored</h1></body></html>',
    });
    s3dir = mkdtempSync(join(tmpdir(), 'glimpse-dst-'));
    s3server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: s3dir, configureBuckets: [{ name: BUCKET }] });
    endpoint = `http://127.0.0.1:${(await s3server.run()).port}`;
    s3 = new S3Client({
      region: 'us-east-1',
      endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    });
    receiver = await startPutReceiver();
    t = await startTestApp();
    ({ key, accountId } = await t.createKey('pro'));
    const created = await t.request('POST', '/v1/storage-destinations', { key, body: destinationBody() });
    expect(created.status).toBe(201);
    destinationId = created.body.id;
  });
  afterAll(async () => {
    await t.close();
    await pages.close();
    await receiver.close();
    s3.destroy();
    await s3server.close();
    rmSync(s3dir, { recursive: true, force: true });
  });

  async function capture(body: Record<string, unknown>): Promise<any> {
    const res = await t.request('POST', '/v1/screenshot', { key, body: { url: `${pages.url}/page`, width: 320, height: 240, ...body } });
    expect(res.status).toBe(202);
    return waitForJob(t, key, res.body.id);
  }

  async function object(objectKey: string): Promise<Buffer> {
    const got = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: objectKey }));
    return Buffer.from(await got.Body!.transformToByteArray());
  }

  it('adds, lists, gets, tests and deletes destinations; never returns credentials; the plan limit holds', async () => {
    const free = await t.createKey('free');
    const first = await t.request('POST', '/v1/storage-destinations', { key: free.key, body: destinationBody() });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      id: expect.stringMatching(/^dst_[0-9A-Za-z]{24}$/),
      type: 's3',
      bucket: BUCKET,
      region: 'us-east-1',
      endpoint: `${endpoint}/`,
      forcePathStyle: true,
      prefix: 'glimpse/',
      description: 'test bucket',
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    const second = await t.request('POST', '/v1/storage-destinations', { key: free.key, body: destinationBody() });
    expect(second.status).toBe(403);
    expect(second.body.code).toBe('PLAN_LIMIT_REACHED');
    expect(second.body.details).toEqual({ resource: 'storage_destinations', limit: 1, plan: 'free' });

    const list = await t.request('GET', '/v1/storage-destinations', { key: free.key });
    expect(list.body.data).toEqual([first.body]);
    expect(JSON.stringify(list.body)).not.toContain('S3RVER');
    expect((await t.request('GET', `/v1/storage-destinations/${first.body.id}`, { key: free.key })).body).toEqual(first.body);
    // Another account's destination does not exist for this one.
    expect((await t.request('GET', `/v1/storage-destinations/${first.body.id}`, { key })).status).toBe(404);

    const test = await t.request('POST', `/v1/storage-destinations/${first.body.id}/test`, { key: free.key });
    expect(test.status).toBe(200);
    expect(test.body).toEqual({ ok: true, error: null });

    expect((await t.request('DELETE', `/v1/storage-destinations/${first.body.id}`, { key: free.key })).status).toBe(204);
    expect((await t.request('GET', `/v1/storage-destinations/${first.body.id}`, { key: free.key })).status).toBe(404);
    expect(
      (await t.request('POST', '/v1/storage-destinations', { key: free.key, body: destinationBody({ accessKeyId: 'WRONG' }) })).status,
    ).toBe(201);
    const wrongTest = await t.request('GET', '/v1/storage-destinations', { key: free.key });
    const failed = await t.request('POST', `/v1/storage-destinations/${wrongTest.body.data[0].id}/test`, { key: free.key });
    expect(failed.body).toEqual({ ok: false, error: expect.stringContaining('InvalidAccessKeyId') });

    const invalid = await t.request('POST', '/v1/storage-destinations', {
      key,
      body: destinationBody({ bucket: undefined, endpoint: 'ftp://x' }),
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.code).toBe('VALIDATION_FAILED');
    expect(invalid.body.details.fields.map((f: { field: string }) => f.field).sort()).toEqual(['bucket', 'endpoint']);
  });

  it('is wrapped by the SDK (glimpse.storageDestinations) and the CLI (glimpse storage add|list|test|delete)', async () => {
    const account = await t.createKey('starter');
    const glimpse = new Glimpse({ apiKey: account.key, baseUrl: t.baseUrl });
    const created = await glimpse.storageDestinations.create(destinationBody() as Parameters<Glimpse['storageDestinations']['create']>[0]);
    expect(await glimpse.storageDestinations.get(created.id)).toEqual(created);
    expect(await glimpse.storageDestinations.test(created.id)).toEqual({ ok: true, error: null });

    const run = async (...argv: string[]) => {
      const stdout = new PassThrough();
      const stderr = new PassThrough();
      const out: Buffer[] = [];
      stdout.on('data', (c: Buffer) => out.push(c));
      const code = await cli(['--api-key', account.key, '--base-url', t.baseUrl, 'storage', ...argv], { stdout, stderr });
      return { code, out: Buffer.concat(out).toString('utf8') };
    };
    process.env.GLIMPSE_STORAGE_SECRET_ACCESS_KEY = 'S3RVER';
    try {
      const added = await run('add', '--bucket', BUCKET, '--endpoint', endpoint, '--force-path-style', '--access-key-id', 'S3RVER');
      expect(added.code).toBe(0);
      const id = JSON.parse(added.out).id as string;
      expect(JSON.parse((await run('list')).out).map((d: { id: string }) => d.id)).toEqual([created.id, id]);
      expect(await run('test', id)).toEqual({ code: 0, out: expect.stringContaining('"ok": true') });
      expect((await run('delete', id)).code).toBe(0);
    } finally {
      delete process.env.GLIMPSE_STORAGE_SECRET_ACCESS_KEY;
    }
    await glimpse.storageDestinations.delete(created.id);
    expect(await glimpse.storageDestinations.list()).toEqual([]);
  });

  it('uploads the image, its thumbnail and the extracted files under the path template and ends done with key and ETag', async () => {
    const job = await capture({
      extract: ['markdown'],
      thumbnail: { width: 160 },
      storage: { destinationId, path: '{accountId}/{date}/{host}/{id}.{ext}' },
    });
    expect(job.status).toBe('done');
    const day = new Date(job.createdAt).toISOString().slice(0, 10);
    const objectKey = `glimpse/${accountId}/${day}/127.0.0.1/${job.id}.png`;
    expect(job.storage).toEqual({ destinationId, bucket: BUCKET, key: objectKey, etag: expect.stringMatching(/^"[0-9a-f]{32}"$/) });
    const stored = await object(objectKey);
    expect(pngSize(stored)).toEqual({ width: 320, height: 240 });
    // The service keeps its copy too (keepCopy defaults to true): the same bytes.
    expect(Buffer.from(await (await fetch(job.url)).arrayBuffer())).toEqual(stored);
    const head = await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: objectKey }));
    expect(head.ETag).toBe(job.storage.etag);
    expect(head.ContentType).toBe('image/png');
    expect((await object(`glimpse/${accountId}/${day}/127.0.0.1/${job.id}.md`)).toString('utf8')).toContain('Stored');
    expect(pngSize(await object(`glimpse/${accountId}/${day}/127.0.0.1/${job.id}.thumb.png`))).toEqual({ width: 160, height: 120 });
  });

  it('uploads an animated capture with its extension and video type, and its poster beside it as .thumb.png', async () => {
    const job = await capture({ format: 'mp4', animation: { durationMs: 1000, fps: 5 }, storage: { destinationId } });
    expect(job.status).toBe('done');
    expect(job.storage.key).toBe(`glimpse/${job.id}.mp4`);
    const head = await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: job.storage.key }));
    expect(head.ContentType).toBe('video/mp4');
    expect((await object(job.storage.key)).subarray(4, 8).toString('latin1')).toBe('ftyp');
    expect(pngSize(await object(`glimpse/${job.id}.thumb.png`))).toEqual({ width: 320, height: 240 });
  });

  it('keeps no copy with keepCopy false: the job url is null', async () => {
    const storedFiles = () => readdirSync(t.config.storageDir, { recursive: true }).length;
    const before = storedFiles();
    const job = await capture({ format: 'jpeg', thumbnail: { width: 100 }, storage: { destinationId, keepCopy: false } });
    expect(job.status).toBe('done');
    expect(storedFiles()).toBe(before);
    expect(job.url).toBeNull();
    expect(job.thumbnailUrl).toBeNull();
    expect(job.storage.key).toBe(`glimpse/${job.id}.jpeg`);
    expect((await object(job.storage.key)).subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
  });

  it('fails the job with a customer-safe reason when the bucket refuses the credentials', async () => {
    const before = readdirSync(t.config.storageDir, { recursive: true }).filter((f) => String(f).endsWith('.png')).length;
    const other = await t.request('POST', '/v1/storage-destinations', { key, body: destinationBody({ accessKeyId: 'NOT-A-KEY' }) });
    const job = await capture({ storage: { destinationId: other.body.id } });
    expect(job.status).toBe('failed');
    expect(job.error).toMatch(/^storage upload failed: the access key id is not known to the bucket \(InvalidAccessKeyId\), HTTP 403$/);
    expect(job.url).toBeNull();
    expect(job.storage).toBeNull();
    // Its own copy was dropped with the failure, not left behind unreferenced.
    expect(readdirSync(t.config.storageDir, { recursive: true }).filter((f) => String(f).endsWith('.png'))).toHaveLength(before);
  });

  it('sends the image with one PUT to a presigned URL; a non-2xx answer fails the job', async () => {
    const job = await capture({ upload: { url: `${receiver.url}/ok?X-Amz-Signature=abc`, headers: { 'x-amz-meta-run': 'e2e' } } });
    expect(job.status).toBe('done');
    expect(job.storage).toEqual({ destinationId: null, bucket: null, key: null, etag: '"receiver-etag"' });
    const put = receiver.puts.find((p) => p.path === '/ok')!;
    expect(put.headers['content-type']).toBe('image/png');
    expect(put.headers['x-amz-meta-run']).toBe('e2e');
    expect(put.body).toEqual(Buffer.from(await (await fetch(job.url)).arrayBuffer()));

    const refused = await capture({ upload: { url: `${receiver.url}/403` } });
    expect(refused.status).toBe('failed');
    expect(refused.error).toBe('storage upload failed: the upload URL answered HTTP 403');
    // A 4xx is not retried.
    expect(receiver.puts.filter((p) => p.path === '/403')).toHaveLength(1);
  });

  it('dashboard: the Storage page adds, tests and deletes destinations, never showing the secret', async () => {
    const email = `storage-${Math.random().toString(36).slice(2)}@test.local`;
    const password = 'correct horse battery staple';
    await t.get(UsersService).signUp(email, password);
    mkdirSync(SCREENSHOT_DIR, { recursive: true });
    const browser = await launchTestBrowser(t.config);
    try {
      const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 }, baseURL: t.baseUrl })).newPage();
      await page.goto('/dashboard/login');
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL('**/dashboard');
      await page.getByRole('link', { name: 'Storage' }).click();
      await page.waitForURL('**/dashboard/storage');
      expect(await page.getByText('No destinations yet.').isVisible()).toBe(true);

      await page.getByLabel('Bucket').fill(BUCKET);
      await page.getByLabel(/^Endpoint/).fill(endpoint);
      await page.getByLabel('Path-style addressing (MinIO)').check();
      await page.getByLabel('Access key id').fill('S3RVER');
      await page.getByLabel('Secret access key').fill('S3RVER');
      await page.getByLabel(/^Key prefix/).fill('dash/');
      await page.getByRole('button', { name: 'Add destination' }).click();
      await page.getByRole('status').filter({ hasText: 'added' }).waitFor();
      const row = page.locator('#destinations-table tbody tr');
      expect(await row.count()).toBe(1);
      await row.getByRole('button', { name: 'Test' }).click();
      await page.getByTestId('test-result').filter({ hasText: 'passed' }).waitFor();
      expect(await page.content()).not.toContain('S3RVER');
      await page.screenshot({ path: join(SCREENSHOT_DIR, 'storage-tested.png'), caret: 'initial' });
      expect(await seriousAxeViolations(page)).toEqual([]);

      // The free plan allows one destination: the form says so.
      await page.getByLabel('Bucket').fill('second');
      await page.getByLabel('Access key id').fill('S3RVER');
      await page.getByLabel('Secret access key').fill('S3RVER');
      await page.getByRole('button', { name: 'Add destination' }).click();
      await page.getByRole('alert').filter({ hasText: 'free plan allows 1 storage destinations' }).waitFor();
      expect(await page.getByLabel('Bucket').inputValue()).toBe('second');
      expect(await page.getByLabel('Secret access key').inputValue()).toBe('');

      await page.locator('#destinations-table summary').click();
      await page.getByRole('button', { name: 'Delete destination' }).click();
      await page.getByText('No destinations yet.').waitFor();
    } finally {
      await browser.close();
    }
  });

  it('refuses bad storage and upload options at submission with 400, counting nothing', async () => {
    const other = await t.createKey('pro');
    const foreign = (await t.request('POST', '/v1/storage-destinations', { key: other.key, body: destinationBody() })).body.id;
    const before = (await t.request('GET', '/v1/storage-destinations', { key })).headers.get('x-ratelimit-remaining');
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ storage: { destinationId: 'dst_000000000000000000000000' } }, 'storage.destinationId'],
      [{ storage: { destinationId: foreign } }, 'storage.destinationId'],
      [{ storage: { destinationId: 'nope' } }, 'storage.destinationId'],
      [{ storage: { destinationId, path: '{id}/{name}.{ext}' } }, 'storage.path'],
      [{ storage: { destinationId, path: 'x'.repeat(513) } }, 'storage.path'],
      [{ storage: { destinationId }, upload: { url: `${receiver.url}/ok` } }, 'storage'],
      [{ storage: { destinationId }, cache: true }, 'storage'],
      [{ upload: { url: 'ftp://example.com/x' } }, 'upload.url'],
    ];
    for (const [options, field] of cases) {
      const res = await t.request('POST', '/v1/screenshot', { key, body: { url: `${pages.url}/page`, ...options } });
      expect({ status: res.status, code: res.body.code }).toEqual({ status: 400, code: 'VALIDATION_FAILED' });
      expect(res.body.details.fields.map((f: { field: string }) => f.field)).toContain(field);
    }
    const batch = await t.request('POST', '/v1/screenshot/batch', {
      key,
      body: { items: [{ url: `${pages.url}/page` }, { url: `${pages.url}/page`, storage: { destinationId: foreign } }] },
    });
    expect(batch.status).toBe(400);
    expect(batch.body.details.fields[0].field).toBe('items[1].storage.destinationId');
    const after = (await t.request('GET', '/v1/storage-destinations', { key })).headers.get('x-ratelimit-remaining');
    expect(after).toBe(before);
  });
});
