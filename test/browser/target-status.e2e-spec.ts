import { DataSource } from 'typeorm';
import { decodePng } from '../support/images';
import { PageServer, startPageServer } from '../support/page-server';
import { startTestApp, TestApp, waitForJob } from '../support/test-app';

describe('targetStatus and failOnHttpError (CONTRACT.md, "Capture options, second set")', () => {
  let t: TestApp;
  let pages: PageServer;
  let key: string;

  beforeAll(async () => {
    const errorPage = (status: number) => (_req: unknown, res: import('node:http').ServerResponse) =>
      res
        .writeHead(status, { 'content-type': 'text/html' })
        .end(`<!doctype html><body style="margin:0;background:rgb(255,0,0)">error ${status}</body>`);
    pages = await startPageServer({
      '/ok': '<!doctype html><body style="margin:0;background:rgb(0,0,255)">fine</body>',
      '/missing': errorPage(404),
      '/broken': errorPage(503),
      '/moved': (_req, res) => res.writeHead(302, { location: '/ok' }).end(),
    });
    t = await startTestApp();
    ({ key } = await t.createKey());
  });

  afterAll(async () => {
    await t?.close();
    await pages?.close();
  });

  async function job(body: Record<string, unknown>) {
    const res = await t.request('POST', '/v1/screenshot', { key, body: { width: 200, height: 150, ...body } });
    expect(res.status).toBe(202);
    expect(res.body.targetStatus).toBeNull();
    return waitForJob(t, key, res.body.id);
  }

  async function eventOf(screenshotId: string): Promise<{ type: string; data: Record<string, unknown> }> {
    const [row] = await t.get(DataSource).query(`SELECT type, data FROM events WHERE data->>'screenshotId' = $1`, [screenshotId]);
    return row;
  }

  async function firstPixel(url: string): Promise<number[]> {
    const png = decodePng(Buffer.from(await (await fetch(url)).arrayBuffer()));
    return Array.from(png.data.subarray(0, 3));
  }

  it('a 200 page: done with targetStatus 200, in the job and in screenshot.completed', async () => {
    const done = await job({ url: `${pages.url}/ok` });
    expect(done).toMatchObject({ status: 'done', targetStatus: 200 });
    expect(await eventOf(done.id)).toMatchObject({ type: 'screenshot.completed', data: { targetStatus: 200 } });
  });

  it('a redirect: the status of the document the redirect leads to', async () => {
    expect(await job({ url: `${pages.url}/moved` })).toMatchObject({ status: 'done', targetStatus: 200 });
  });

  it('a 404 page without failOnHttpError: the error page is captured, targetStatus 404', async () => {
    const done = await job({ url: `${pages.url}/missing` });
    expect(done).toMatchObject({ status: 'done', targetStatus: 404, error: null });
    expect(await firstPixel(done.url)).toEqual([255, 0, 0]);
    expect(await eventOf(done.id)).toMatchObject({ type: 'screenshot.completed', data: { targetStatus: 404 } });
  });

  it.each([
    [404, '/missing'],
    [503, '/broken'],
  ])('HTTP %i (%s) with failOnHttpError: failed "target answered HTTP <status>", in screenshot.failed too', async (status, path) => {
    const failed = await job({ url: `${pages.url}${path}`, failOnHttpError: true });
    expect(failed).toMatchObject({ status: 'failed', url: null, error: `target answered HTTP ${status}`, targetStatus: status });
    expect(failed.options).toEqual({ width: 200, height: 150, failOnHttpError: true });
    expect(await eventOf(failed.id)).toMatchObject({
      type: 'screenshot.failed',
      data: { error: `target answered HTTP ${status}`, targetStatus: status },
    });
  });

  it('a 200 page with failOnHttpError: done', async () => {
    const done = await job({ url: `${pages.url}/ok`, failOnHttpError: true });
    expect(done).toMatchObject({ status: 'done', targetStatus: 200 });
    expect(await firstPixel(done.url)).toEqual([0, 0, 255]);
  });

  it('a page that never answered: failed, targetStatus null', async () => {
    const closed = await startPageServer({});
    const url = `${closed.url}/gone`;
    await closed.close();
    expect(await job({ url })).toMatchObject({ status: 'failed', targetStatus: null });
  });

  it('an uploaded document: targetStatus null', async () => {
    const form = new FormData();
    form.append('file', new Blob(['<!doctype html><body>uploaded</body>'], { type: 'text/html' }), 'page.html');
    form.append('failOnHttpError', 'true');
    const res = await fetch(`${t.baseUrl}/v1/screenshot/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form,
    });
    expect(res.status).toBe(202);
    const done = await waitForJob(t, key, ((await res.json()) as { id: string }).id);
    expect(done).toMatchObject({ status: 'done', targetStatus: null });
  });

  it('failOnHttpError must be a boolean: 400 naming it', async () => {
    const res = await t.request('POST', '/v1/screenshot', { key, body: { url: `${pages.url}/ok`, failOnHttpError: 'yes' } });
    expect(res.status).toBe(400);
    expect(res.body.details.fields).toContainEqual({ field: 'failOnHttpError', message: 'must be a boolean' });
  });
});
