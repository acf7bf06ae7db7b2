import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Browser } from 'playwright';
import { signedInOwner } from '../support/dashboard-owner';
import { launchTestBrowser, seriousAxeViolations } from '../support/test-browser';
import { PageServer, startPageServer } from '../support/page-server';
import { startTestApp, TestApp } from '../support/test-app';

/** Where the 1280×800 PNGs go (the same folder as the other dashboard tests; look at them). */
const SCREENSHOT_DIR = process.env.DASHBOARD_SCREENSHOT_DIR ?? join(tmpdir(), 'glimpse-dashboard-screenshots');
const COLOURS = ['#fde68a', '#bfdbfe', '#bbf7d0', '#fecaca', '#ddd6fe'];

/** The dashboard's Crawls pages (docs/dashboard.md): the list with progress, one crawl with its pages' thumbnails. */
describe('dashboard: Crawls pages', () => {
  let t: TestApp;
  let browser: Browser;
  let site: PageServer;
  const cspViolations: string[] = [];

  const newOwner = () => signedInOwner(t, browser, { prefix: 'crawls', keyName: 'site-audit', cspViolations });

  beforeAll(async () => {
    mkdirSync(SCREENSHOT_DIR, { recursive: true });
    t = await startTestApp();
    browser = await launchTestBrowser(t.config);
    const nav = COLOURS.map((_, i) => `<a href="/p${i}">Page ${i}</a>`).join(' ');
    const routes: Record<string, string> = {
      '/': `<!doctype html><html lang="en"><head><title>Harbour Coffee</title></head><body style="margin:0;font:32px sans-serif"><h1>Harbour Coffee</h1>${nav}</body></html>`,
    };
    COLOURS.forEach((colour, i) => {
      routes[`/p${i}`] =
        `<!doctype html><html lang="en"><head><title>Menu ${i + 1}</title></head><body style="margin:0;background:${colour};font:40px sans-serif"><h1>Menu ${i + 1}</h1>${nav}</body></html>`;
    });
    site = await startPageServer(routes);
  });

  afterAll(async () => {
    await browser?.close();
    await site?.close();
    await t?.close();
  });

  afterEach(() => {
    expect(cspViolations.splice(0)).toEqual([]);
  });

  it('lists crawls with their progress and shows one with its bundle and the thumbnails of its pages', async () => {
    const { context, page, key } = await newOwner();
    const res = await t.request('POST', '/v1/crawls', { key, body: { url: `${site.url}/`, discover: 'links', maxDepth: 1 } });
    expect(res.status).toBe(202);
    for (const deadline = Date.now() + 60_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 250))) {
      if ((await t.request('GET', `/v1/crawls/${res.body.id}`, { key })).body.status === 'completed') break;
    }

    await page.getByRole('link', { name: 'Crawls', exact: true }).click();
    await page.waitForURL('**/dashboard/crawls');
    const row = page.locator(`tr[data-crawl-id="${res.body.id}"]`);
    expect(await row.locator('td').first().textContent()).toContain('6/6 pages');
    expect(await row.locator('progress').getAttribute('value')).toBe('6');
    expect(await row.getByRole('link', { name: 'ZIP' }).getAttribute('href')).toMatch(/\/files\/.+\.zip$/);
    await page.screenshot({ path: join(SCREENSHOT_DIR, 'crawls.png') });
    expect(await seriousAxeViolations(page)).toEqual([]);

    await row.getByRole('link', { name: `${site.url}/` }).click();
    await page.waitForURL(`**/dashboard/crawls/${res.body.id}`);
    const thumbs = page.locator('ul.crawl-pages img.crawl-thumb');
    expect(await thumbs.count()).toBe(6);
    await page.waitForFunction(() =>
      Array.from(document.querySelectorAll('img.crawl-thumb')).every((img) => (img as HTMLImageElement).naturalWidth > 0),
    );
    expect(await page.locator('ul.crawl-pages li').first().textContent()).toContain('Harbour Coffee');
    await expect(page.getByRole('link', { name: 'Download the bundle (ZIP)' }).isVisible()).resolves.toBe(true);
    await page.screenshot({ path: join(SCREENSHOT_DIR, 'crawl.png'), fullPage: true });
    expect(await seriousAxeViolations(page)).toEqual([]);

    const other = await newOwner();
    const missing = await other.page.goto(`/dashboard/crawls/${res.body.id}`);
    expect(missing?.status()).toBe(404);
    await other.context.close();
    await context.close();
  });
});
