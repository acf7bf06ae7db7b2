import { Browser, BrowserContext, Page } from 'playwright';
import { addPageStyles, captureScreenshot, elementPageBox, maskElements, navigate, PageFailure } from '../../src/browser/page-toolkit';
import { loadConfig } from '../../src/config/app-config';
import { EGRESS_ERROR_HEADER } from '../../src/egress/egress-proxy';
import { decodePng, pixel } from '../support/images';
import { PageServer, startPageServer } from '../support/page-server';
import { launchTestBrowser } from '../support/test-browser';

/** The browser toolkit's page helpers on a real Chromium page, pages served on loopback. */
describe('browser toolkit on a real page', () => {
  const config = loadConfig(process.env);
  let browser: Browser;
  let server: PageServer;
  let context: BrowserContext;
  let page: Page;

  const BOXES = `<!doctype html><html><body style="margin:0;background:#fff">
    <div id="secret" style="position:absolute;left:30px;top:40px;width:100px;height:50px;background:#0a0">secret</div>
    <div id="half" style="position:absolute;left:10.5px;top:200.25px;width:20.5px;height:10px;background:#00f"></div>
    <div id="hidden" style="display:none">hidden</div>
  </body></html>`;

  beforeAll(async () => {
    server = await startPageServer({
      '/boxes': BOXES,
      '/bare': '<!doctype html><html><body style="margin:0"><div style="width:40px;height:40px;background:#f00"></div></body></html>',
      '/refused-by-proxy': (_req, res) =>
        res.writeHead(403, { [EGRESS_ERROR_HEADER]: 'Target not allowed: internal.test resolves to 10.0.0.1 (private)' }).end(),
      '/never-loads': (_req, res) => {
        // The document commits and renders, but an image never finishes: `load` is never reached.
        res.writeHead(200, { 'content-type': 'text/html' }).end(`<body>partial<img src="${server.url}/hang"></body>`);
      },
      '/hang': () => undefined,
    });
    browser = await launchTestBrowser(config);
  });

  afterAll(async () => {
    await browser.close();
    await server.close();
  });

  beforeEach(async () => {
    context = await browser.newContext({ viewport: { width: 320, height: 240 } });
    page = await context.newPage();
  });
  afterEach(() => context.close());

  const shoot = async (options: { omitBackground?: boolean; clip?: { x: number; y: number; width: number; height: number } } = {}) =>
    decodePng(
      await captureScreenshot(await context.newCDPSession(page), {
        format: 'png',
        clip: { ...(options.clip ?? { x: 0, y: 0, width: 320, height: 240 }), scale: 1 },
        beyondViewport: false,
        omitBackground: options.omitBackground,
        cap: { deviceScale: 1, maxPixels: 100_000_000 },
      }),
    );

  it('masks matching elements with the colour at their box, leaving the rest of the page as it was', async () => {
    await navigate(page, `${server.url}/boxes`, { waitUntil: 'load', timeoutMs: 10_000 });
    expect(await maskElements(page, ['#secret', '#hidden'], '#ff00ff')).toBe(1); // the hidden element has no box
    const image = await shoot();
    expect(pixel(image, 31, 41)).toEqual([255, 0, 255]);
    expect(pixel(image, 128, 88)).toEqual([255, 0, 255]);
    expect(pixel(image, 131, 41)).toEqual([255, 255, 255]); // just right of the box
    expect(pixel(image, 15, 205)).toEqual([0, 0, 255]); // another element, not masked
    expect(await maskElements(page, ['div['], '#000')).toBe('invalid selector in mask: div[');
  });

  it('hides elements and adds CSS in one sheet, and says which selector is invalid', async () => {
    await navigate(page, `${server.url}/boxes`, { waitUntil: 'load', timeoutMs: 10_000 });
    expect(await addPageStyles(page, { hideSelectors: ['#secret'], css: 'body { background: #000 !important; }' })).toBeNull();
    const image = await shoot();
    expect(pixel(image, 31, 41)).toEqual([0, 0, 0]);
    expect(await addPageStyles(page, { hideSelectors: ['##'] })).toBe('invalid selector in hideSelectors: ##');
  });

  it('measures an element’s box in whole pixels around it, and captures exactly that clip', async () => {
    await navigate(page, `${server.url}/boxes`, { waitUntil: 'load', timeoutMs: 10_000 });
    const box = await elementPageBox(page.locator('#half'));
    expect(box).toEqual({ x: 10, y: 200, width: 21, height: 11 }); // 10.5 to 31 and 200.25 to 210.25, widened
    const image = await shoot({ clip: box });
    expect({ width: image.width, height: image.height }).toEqual({ width: 21, height: 11 });
    expect(pixel(image, 5, 5)).toEqual([0, 0, 255]);
  });

  it('keeps the alpha channel with omitBackground, and paints the default white without it', async () => {
    await navigate(page, `${server.url}/bare`, { waitUntil: 'load', timeoutMs: 10_000 });
    const transparent = await shoot({ omitBackground: true });
    expect(transparent.channels).toBe(4);
    expect(transparent.data[(100 * transparent.width + 100) * 4 + 3]).toBe(0);
    expect(pixel(transparent, 10, 10)).toEqual([255, 0, 0]);
    const opaque = await shoot();
    expect(pixel(opaque, 100, 100)).toEqual([255, 255, 255]);
    if (opaque.channels === 4) expect(opaque.data[(100 * opaque.width + 100) * 4 + 3]).toBe(255);
  });

  it('navigates with customer-safe failures: the proxy’s refusal, Chromium’s net:: name, the timeout', async () => {
    // Each on a page of its own: a failed navigation leaves Chromium's error page loading behind it.
    const failure = async (url: string, timeoutMs = 10_000) =>
      navigate(await context.newPage(), url, { waitUntil: 'load', timeoutMs }).catch((e: unknown) => e);
    const refused = await failure(`${server.url}/refused-by-proxy`);
    expect(refused).toBeInstanceOf(PageFailure);
    expect((refused as Error).message).toBe('Target not allowed: internal.test resolves to 10.0.0.1 (private)');
    const closedPort = await startPageServer({});
    await closedPort.close();
    expect(((await failure(closedPort.url)) as Error).message).toBe('net::ERR_CONNECTION_REFUSED');
    const slow = await failure(`${server.url}/never-loads`, 1_000);
    expect(slow).toBeInstanceOf(PageFailure);
    expect((slow as Error).message).toBe('navigation timed out after 1000 ms');
  });

  it('keeps what rendered when asked to, and says the milestone was not reached', async () => {
    const loaded = await navigate(page, `${server.url}/never-loads`, { waitUntil: 'load', timeoutMs: 1_000, acceptRendered: true });
    expect(loaded.reachedWaitUntil).toBe(false);
    expect(loaded.response?.status()).toBe(200);
    expect(await page.textContent('body')).toContain('partial');
  });
});
