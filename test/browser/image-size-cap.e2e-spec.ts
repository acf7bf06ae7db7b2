import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { writeFileSync } from 'node:fs';
import { DataSource } from 'typeorm';
import { utcMonthOf } from '../../src/common/utc-month';
import { pngSize } from '../support/images';
import { PageServer, startPageServer } from '../support/page-server';
import { download, waitForRun } from '../support/runs';
import { startTestApp, TestApp, waitForJob } from '../support/test-app';

/** Where the test writes the images it produces, to look at them. */
const LOOK_DIR = process.env.GLIMPSE_TEST_IMAGE_DIR;

/** A small cap, so the pages that pass it stay cheap: 2,000,000 device pixels. */
const MAX_IMAGE_PIXELS = 2_000_000;

/** The full-page cut of CONTRACT.md's image size cap: floor(MAX_IMAGE_PIXELS / (width × scale²)) CSS px. */
const cut = (width: number, scale: number) => Math.floor(MAX_IMAGE_PIXELS / (width * scale * scale));

describe('MAX_IMAGE_PIXELS (CONTRACT.md, "Capture options, second set": image size cap)', () => {
  let t: TestApp;
  let pages: PageServer;
  let key: string;
  let keyId: string;
  let db: DataSource;

  beforeAll(async () => {
    pages = await startPageServer({
      // 6,000 CSS px tall, striped so a cut is visible.
      '/tall': `<!doctype html><html><body style="margin:0">
        <div style="height:6000px;background:repeating-linear-gradient(#fff 0 100px,#36c 100px 200px)"></div></body></html>`,
      // An element whose box is 2,000 × 1,500 = 3,000,000 CSS px.
      '/huge': `<!doctype html><html><body style="margin:0">
        <div id="huge" style="width:2000px;height:1500px;background:#c33"></div><p id="small">small</p></body></html>`,
    });
    t = await startTestApp({ env: { MAX_IMAGE_PIXELS: String(MAX_IMAGE_PIXELS) } });
    ({ key, keyId } = await t.createKey());
    db = t.get(DataSource);
  });

  afterAll(async () => {
    await t?.close();
    await pages?.close();
  });

  async function usage(): Promise<number> {
    const rows = await db.query(`SELECT used FROM quota_usage WHERE api_key_id = $1 AND month = $2`, [keyId, utcMonthOf(new Date()).month]);
    return rows.length ? rows[0].used : 0;
  }

  async function rows(): Promise<number> {
    const [{ jobs }] = await db.query(`SELECT COUNT(*)::int AS jobs FROM screenshot_jobs WHERE api_key_id = $1`, [keyId]);
    const [{ runs }] = await db.query(`SELECT COUNT(*)::int AS runs FROM runs WHERE api_key_id = $1`, [keyId]);
    return jobs + runs;
  }

  /** Expects a 400 `VALIDATION_FAILED` naming `field` (with the cap in its message), nothing counted, no row. */
  async function expectRefused(send: () => Promise<{ status: number; body: any }>, field: string): Promise<void> {
    const [usedBefore, rowsBefore] = [await usage(), await rows()];
    const res = await send();
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_FAILED');
    expect(res.body.details.fields).toContainEqual({ field, message: expect.stringContaining('MAX_IMAGE_PIXELS') });
    expect(await usage()).toBe(usedBefore);
    expect(await rows()).toBe(rowsBefore);
  }

  async function png(url: string, lookAs: string): Promise<Buffer> {
    const file = await download(url);
    expect(file.status).toBe(200);
    if (LOOK_DIR) writeFileSync(`${LOOK_DIR}/${lookAs}`, file.data);
    return file.data;
  }

  describe('at submission', () => {
    it('refuses a clip over the cap, naming clip, counting nothing (and takes one at the cap)', async () => {
      const url = `${pages.url}/tall`;
      await expectRefused(
        () => t.request('POST', '/v1/screenshot', { key, body: { url, clip: { x: 0, y: 0, width: 2000, height: 1001 } } }),
        'clip',
      );
      // At scale 2 a quarter of the CSS px.
      await expectRefused(
        () =>
          t.request('POST', '/v1/screenshot', {
            key,
            body: { url, width: 400, height: 300, scale: 2, clip: { x: 0, y: 0, width: 1000, height: 501 } },
          }),
        'clip',
      );
      const first = await t.request('POST', '/v1/screenshot', { key, body: { url, clip: { x: 0, y: 0, width: 2000, height: 1000 } } });
      expect(first.status).toBe(202);
      const refused = await t.request('POST', '/v1/screenshot', { key, body: { url, clip: { x: 0, y: 0, width: 16384, height: 16384 } } });
      expect(refused.status).toBe(400);
      expect(refused.headers.get('x-ratelimit-remaining')).toBe(first.headers.get('x-ratelimit-remaining'));
      const job = await waitForJob(t, key, first.body.id);
      expect(job).toMatchObject({ status: 'done', clipped: false });
      expect(pngSize(await png(job.url, 'image-cap-clip.png'))).toEqual({ width: 2000, height: 1000 });
    });

    it('refuses a viewport whose width × height × scale² is over the cap, naming the field given', async () => {
      const url = `${pages.url}/tall`;
      await expectRefused(() => t.request('POST', '/v1/screenshot', { key, body: { url, width: 1000, height: 800, scale: 3 } }), 'width');
      await expectRefused(() => t.request('POST', '/v1/screenshot', { key, body: { url, scale: 2 } }), 'scale');
      await expectRefused(() => t.request('POST', '/v1/screenshot', { key, body: { url, device: 'iPad Pro 11 landscape' } }), 'device');
    });

    it('applies to batch items, the upload form, runs and MCP take_screenshot', async () => {
      const url = `${pages.url}/tall`;
      const big = { x: 0, y: 0, width: 3000, height: 3000 };
      await expectRefused(
        () => t.request('POST', '/v1/screenshot/batch', { key, body: { items: [{ url }, { url, clip: big }] } }),
        'items[1].clip',
      );
      await expectRefused(async () => {
        const form = new FormData();
        form.append('file', new Blob(['<html><body>hi</body></html>'], { type: 'text/html' }), 'page.html');
        form.append('clip', JSON.stringify(big));
        const res = await fetch(`${t.baseUrl}/v1/screenshot/upload`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}` },
          body: form,
        });
        return { status: res.status, body: await res.json() };
      }, 'clip');
      await expectRefused(
        () => t.request('POST', '/v1/runs', { key, body: { url, width: 1000, height: 800, scale: 3, steps: [{ action: 'screenshot' }] } }),
        'width',
      );

      const client = new Client({ name: 'glimpse-e2e', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${t.baseUrl}/mcp/${key}`)));
      try {
        const [usedBefore, rowsBefore] = [await usage(), await rows()];
        const result = (await client.callTool({ name: 'take_screenshot', arguments: { url, clip: big } })) as CallToolResult;
        expect(result.isError).toBe(true);
        const text = result.content.flatMap((c) => (c.type === 'text' ? [c.text] : [])).join('\n');
        expect(text).toMatch(/^VALIDATION_FAILED: .*clip: .*MAX_IMAGE_PIXELS/);
        const run = (await client.callTool({
          name: 'run_browser_session',
          arguments: { url, scale: 3, width: 1000, height: 800, steps: [] },
        })) as CallToolResult;
        expect(run.isError).toBe(true);
        expect(await usage()).toBe(usedBefore);
        expect(await rows()).toBe(rowsBefore);
      } finally {
        await client.close();
      }
    });
  });

  describe('in the page', () => {
    it('cuts a full page taller than the cap: done, clipped true, the PNG as tall as the cut', async () => {
      const res = await t.request('POST', '/v1/screenshot', {
        key,
        body: { url: `${pages.url}/tall`, width: 500, height: 400, fullPage: true },
      });
      expect(res.status).toBe(202);
      const job = await waitForJob(t, key, res.body.id);
      expect(job).toMatchObject({ status: 'done', clipped: true, error: null });
      expect(pngSize(await png(job.url, 'image-cap-full-page.png'))).toEqual({ width: 500, height: cut(500, 1) });

      const scaled = await t.request('POST', '/v1/screenshot', {
        key,
        body: { url: `${pages.url}/tall`, width: 500, height: 400, scale: 2, fullPage: true },
      });
      const scaledJob = await waitForJob(t, key, scaled.body.id);
      expect(scaledJob).toMatchObject({ status: 'done', clipped: true });
      expect(pngSize(await png(scaledJob.url, 'image-cap-full-page-2x.png'))).toEqual({ width: 1000, height: cut(500, 2) * 2 });
    });

    it('fails a selector whose box is over the cap with "image larger than N pixels"', async () => {
      const res = await t.request('POST', '/v1/screenshot', { key, body: { url: `${pages.url}/huge`, selector: '#huge' } });
      expect(res.status).toBe(202);
      const job = await waitForJob(t, key, res.body.id);
      expect(job).toMatchObject({ status: 'failed', error: `image larger than ${MAX_IMAGE_PIXELS} pixels` });
      expect(job.error).not.toMatch(/Protocol error/);
      const small = await t.request('POST', '/v1/screenshot', { key, body: { url: `${pages.url}/huge`, selector: '#small' } });
      expect(await waitForJob(t, key, small.body.id)).toMatchObject({ status: 'done' });
    });

    it("cuts a run's full-page step screenshot at the cap and the height cap divided by scale; fails a step over the cap", async () => {
      const res = await t.request('POST', '/v1/runs', {
        key,
        body: {
          url: `${pages.url}/tall`,
          width: 500,
          height: 400,
          scale: 2,
          video: false,
          steps: [
            { action: 'screenshot', fullPage: true },
            { action: 'goto', url: `${pages.url}/huge` },
            { action: 'screenshot', selector: '#huge', optional: true },
          ],
        },
      });
      expect(res.status).toBe(202);
      const run = await waitForRun(t, key, res.body.id);
      expect(run.steps[0]).toMatchObject({ status: 'ok' });
      expect(pngSize(await png(run.steps[0].screenshotUrl, 'image-cap-run-step.png'))).toEqual({ width: 1000, height: cut(500, 2) * 2 });
      expect(run.steps[2]).toMatchObject({
        status: 'failed',
        error: expect.stringContaining(`image larger than ${MAX_IMAGE_PIXELS} pixels`),
      });
    });
  });
});
