import { IncomingHttpHeaders } from 'node:http';
import { writeFileSync } from 'node:fs';
import { decodePng, DecodedPng, pixel, pngSize } from '../support/images';
import { PageServer, startPageServer } from '../support/page-server';
import { startTestApp, TestApp, waitForJob } from '../support/test-app';

/** Where the test writes the images it produces, to look at them. */
const LOOK_DIR = process.env.GLIMPSE_TEST_IMAGE_DIR;

describe('capture options (CONTRACT.md "Capture options")', () => {
  let t: TestApp;
  let pages: PageServer;
  let other: PageServer;
  let key: string;
  /** Requests seen by the two page servers: path and headers. */
  const seen: { host: 'target' | 'other'; path: string; headers: IncomingHttpHeaders }[] = [];

  const box = `<!doctype html><html><body style="margin:0;background:#fff">
    <div id="box" style="position:absolute;left:50px;top:70px;width:300px;height:120px;background:rgb(255,0,0)"></div></body></html>`;

  beforeAll(async () => {
    other = await startPageServer(
      {
        '/pixel.png': (req, res) => {
          seen.push({ host: 'other', path: '/pixel.png', headers: req.headers });
          res.writeHead(204).end();
        },
        '/landing': (req, res) => {
          seen.push({ host: 'other', path: '/landing', headers: req.headers });
          res.writeHead(200, { 'content-type': 'text/html' }).end('<body style="background:#fff">landed</body>');
        },
      },
      '127.0.0.2',
    );
    const record = (path: string, body: string) => (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => {
      seen.push({ host: 'target', path, headers: req.headers });
      res.writeHead(200, { 'content-type': 'text/html' }).end(body);
    };
    pages = await startPageServer({
      '/box': box,
      '/late': `<!doctype html><body style="margin:0;background:#fff"><script>
        setTimeout(() => { const d = document.createElement('div'); d.id = 'late';
          d.style.cssText = 'width:100px;height:100px;background:rgb(0,0,255)'; document.body.appendChild(d); }, 1000);</script></body>`,
      '/late-fetch': `<!doctype html><body style="margin:0;background:rgb(255,255,255)"><script>
        window.addEventListener('load', () => setTimeout(() => fetch('/slow').then(() => { document.body.style.background = 'rgb(0,0,255)'; }), 100));</script></body>`,
      '/slow': (_req, res) => setTimeout(() => res.writeHead(200).end('ok'), 800),
      '/banner': `<!doctype html><body style="margin:0;background:rgb(255,255,255)">
        <div id="banner" style="position:fixed;inset:0;background:rgb(255,0,0)"></div></body>`,
      '/scheme': `<!doctype html><style>body{margin:0;background:rgb(255,255,255)} @media (prefers-color-scheme: dark){body{background:rgb(0,0,0)}}</style><body></body>`,
      '/intl': `<!doctype html><body><script>
        const report = new URLSearchParams({ tz: Intl.DateTimeFormat().resolvedOptions().timeZone, lang: navigator.language,
          date: new Date(Date.UTC(2026, 0, 15, 12)).toLocaleString(undefined, { hour: 'numeric', timeZoneName: 'short' }) });
        fetch('/report?' + report);</script></body>`,
      '/report': (req, res) => {
        seen.push({ host: 'target', path: req.url ?? '', headers: req.headers });
        res.writeHead(204).end();
      },
      '/ua': record('/ua', '<body>ua</body>'),
      '/with-third-party': (req, res) => {
        seen.push({ host: 'target', path: '/with-third-party', headers: req.headers });
        res.writeHead(200, { 'content-type': 'text/html' }).end(`<body><img src="${other.url}/pixel.png"><img src="/own.png"></body>`);
      },
      '/own.png': (req, res) => {
        seen.push({ host: 'target', path: '/own.png', headers: req.headers });
        res.writeHead(204).end();
      },
      '/to-other': (req, res) => {
        seen.push({ host: 'target', path: '/to-other', headers: req.headers });
        res.writeHead(302, { location: `${other.url}/landing` }).end();
      },
      '/doc': `<!doctype html><body style="margin:0"><h1 style="color:rgb(200,0,0)">Invoice 42</h1><p>Lorem ipsum dolor sit amet.</p></body>`,
    });
    t = await startTestApp({ env: { CAPTURE_TIMEOUT_MS: '5000' } });
    ({ key } = await t.createKey());
  });

  afterAll(async () => {
    await t?.close();
    await pages?.close();
    await other?.close();
  });

  async function capture(body: Record<string, unknown>) {
    const res = await t.request('POST', '/v1/screenshot', { key, body });
    expect(res.status).toBe(202);
    return waitForJob(t, key, res.body.id);
  }

  async function download(url: string, lookAs?: string): Promise<Buffer> {
    const res = await fetch(url);
    expect(res.status).toBe(200);
    const data = Buffer.from(await res.arrayBuffer());
    if (LOOK_DIR && lookAs) writeFileSync(`${LOOK_DIR}/${lookAs}`, data);
    return data;
  }

  async function png(body: Record<string, unknown>, lookAs?: string): Promise<DecodedPng> {
    const job = await capture(body);
    expect(job).toMatchObject({ status: 'done', error: null });
    return decodePng(await download(job.url, lookAs));
  }

  describe('validation: a 400 naming the field, nothing created', () => {
    it.each([
      [{ selector: '#a', fullPage: true } as Record<string, unknown>, 'selector'],
      [{ selector: '#a', clip: { x: 0, y: 0, width: 10, height: 10 } }, 'clip'],
      [{ clip: { x: 0, y: 0, width: 0, height: 10 } }, 'clip.width'],
      [{ clip: { x: 0, y: 0, width: 10 } }, 'clip.height'],
      [{ scale: 4 }, 'scale'],
      [{ quality: 80 }, 'quality'],
      [{ format: 'jpeg', quality: 0 }, 'quality'],
      [{ waitUntil: 'idle' }, 'waitUntil'],
      [{ hideSelectors: [] }, 'hideSelectors'],
      [{ hideSelectors: ['#a', ''] }, 'hideSelectors[1]'],
      [{ css: 'x'.repeat(65_537) }, 'css'] as const,
      [{ device: 'Nokia 3310' }, 'device'],
      [{ headers: { Host: 'evil.example' } }, 'headers.Host'],
      [{ headers: { 'Proxy-Authorization': 'x' } }, 'headers.Proxy-Authorization'],
      [{ headers: { 'X-A': 'a\r\nb' } }, 'headers.X-A'],
      [{ cookies: [{ name: 'a b', value: 'x' }] }, 'cookies[0].name'],
      [{ cookies: [{ name: 'a', value: 'x', sameSite: 'Sometimes' }] }, 'cookies[0].sameSite'],
      [{ timezone: 'Mars/Olympus_Mons' }, 'timezone'],
      [{ locale: 'not a locale!' }, 'locale'],
      [{ pdf: { paper: 'A4' } }, 'pdf'],
      [{ format: 'pdf', selector: '#a' }, 'selector'],
      [{ format: 'pdf', scale: 2 }, 'scale'],
      [{ format: 'pdf', pdf: { paper: 'B5' } }, 'pdf.paper'],
      [{ cacheTtl: 600 }, 'cacheTtl'],
      [{ cache: true, cacheTtl: 10 }, 'cacheTtl'],
      [{ blockAds: 'yes' }, 'blockAds'],
    ])('case %# → 400 naming the field', async (options: Record<string, unknown>, field: string) => {
      const res = await t.request('POST', '/v1/screenshot', { key, body: { url: `${pages.url}/box`, ...options } });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('VALIDATION_FAILED');
      expect(res.body.details.fields.map((f: { field: string }) => f.field)).toContain(field);
    });
  });

  it('echoes the options it was given under options, with cached false', async () => {
    const options = { width: 400, height: 300, waitUntil: 'domcontentloaded', hideSelectors: ['#banner'], headers: { 'X-Test': '1' } };
    const res = await t.request('POST', '/v1/screenshot', { key, body: { url: `${pages.url}/box`, ...options } });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: 'pending', cached: false, options });
    const job = await waitForJob(t, key, res.body.id);
    expect(job).toMatchObject({ status: 'done', cached: false, options });
  });

  it('selector captures the element box: 300×120 and red; at scale 2 600×240; clip gives its exact size', async () => {
    const element = await png({ url: `${pages.url}/box`, selector: '#box' }, 'selector.png');
    expect([element.width, element.height]).toEqual([300, 120]);
    expect(pixel(element, 5, 5)).toEqual([255, 0, 0]);
    expect(pixel(element, 295, 115)).toEqual([255, 0, 0]);

    const scaled = await png({ url: `${pages.url}/box`, selector: '#box', scale: 2 }, 'selector-scale2.png');
    expect([scaled.width, scaled.height]).toEqual([600, 240]);
    expect(pixel(scaled, 590, 230)).toEqual([255, 0, 0]);

    const clip = await png({ url: `${pages.url}/box`, clip: { x: 40, y: 60, width: 77, height: 33 } }, 'clip.png');
    expect([clip.width, clip.height]).toEqual([77, 33]);
    expect(pixel(clip, 2, 2)).toEqual([255, 255, 255]);
    expect(pixel(clip, 20, 20)).toEqual([255, 0, 0]);
  });

  it('scale 2 makes a 1280×800 capture 2560×1600 px', async () => {
    const job = await capture({ url: `${pages.url}/box`, scale: 2 });
    expect(pngSize(await download(job.url))).toEqual({ width: 2560, height: 1600 });
  });

  it('selector that matches nothing fails with "selector not found"', async () => {
    const job = await capture({ url: `${pages.url}/box`, selector: '#missing' });
    expect(job.status).toBe('failed');
    expect(job.error).toMatch(/^selector not found/);
  });

  it('waitForSelector captures an element added after 1 s, and fails with "selector not visible" when it never comes', async () => {
    const late = await png({ url: `${pages.url}/late`, waitForSelector: '#late', width: 200, height: 200 });
    expect(pixel(late, 50, 50)).toEqual([0, 0, 255]);
    const never = await capture({ url: `${pages.url}/late`, waitForSelector: '#never' });
    expect(never.status).toBe('failed');
    expect(never.error).toMatch(/^selector not visible/);
  });

  it('waitUntil networkidle waits for a late fetch; load does not', async () => {
    const load = await png({ url: `${pages.url}/late-fetch`, width: 200, height: 200 });
    expect(pixel(load, 10, 10)).toEqual([255, 255, 255]);
    const idle = await png({ url: `${pages.url}/late-fetch`, width: 200, height: 200, waitUntil: 'networkidle' });
    expect(pixel(idle, 10, 10)).toEqual([0, 0, 255]);
  });

  it('hideSelectors, css and javascript change the pixels; a throwing script fails the job', async () => {
    const shown = await png({ url: `${pages.url}/banner`, width: 200, height: 200 });
    expect(pixel(shown, 10, 10)).toEqual([255, 0, 0]);
    const hidden = await png({ url: `${pages.url}/banner`, width: 200, height: 200, hideSelectors: ['#banner'] });
    expect(pixel(hidden, 10, 10)).toEqual([255, 255, 255]);
    const styled = await png({
      url: `${pages.url}/banner`,
      width: 200,
      height: 200,
      css: '#banner { background: rgb(0, 128, 0) !important; }',
    });
    expect(pixel(styled, 10, 10)).toEqual([0, 128, 0]);
    const scripted = await png({
      url: `${pages.url}/banner`,
      width: 200,
      height: 200,
      javascript: "await new Promise((r) => setTimeout(r, 200)); document.getElementById('banner').style.background = 'rgb(0, 0, 255)';",
    });
    expect(pixel(scripted, 10, 10)).toEqual([0, 0, 255]);
    const thrown = await capture({ url: `${pages.url}/banner`, javascript: "throw new Error('no banner today')" });
    expect(thrown.status).toBe('failed');
    expect(thrown.error).toMatch(/^javascript failed: .*no banner today/);
  });

  it('darkMode flips a prefers-color-scheme page; reducedMotion is accepted', async () => {
    const light = await png({ url: `${pages.url}/scheme`, width: 200, height: 200 });
    expect(pixel(light, 10, 10)).toEqual([255, 255, 255]);
    const dark = await png({ url: `${pages.url}/scheme`, width: 200, height: 200, darkMode: true, reducedMotion: true });
    expect(pixel(dark, 10, 10)).toEqual([0, 0, 0]);
  });

  it("timezone and locale show in the page's own Intl output and in Accept-Language", async () => {
    await capture({ url: `${pages.url}/intl`, timezone: 'Asia/Tokyo', locale: 'de-DE', waitUntil: 'networkidle' });
    const report = seen.filter((r) => r.path.startsWith('/report?')).pop();
    const params = new URLSearchParams(report!.path.split('?')[1]);
    expect(params.get('tz')).toBe('Asia/Tokyo');
    expect(params.get('lang')).toBe('de-DE');
    expect(params.get('date')).toMatch(/^21 Uhr/); // 12:00 UTC is 21:00 in Tokyo, written the German way
    expect(report!.headers['accept-language']).toMatch(/^de-DE/);
  });

  it('device "iPhone 15" gives its viewport × scale and a mobile user agent; explicit userAgent wins', async () => {
    const job = await capture({ url: `${pages.url}/ua`, device: 'iPhone 15' });
    expect(pngSize(await download(job.url, 'iphone15.png'))).toEqual({ width: 393 * 3, height: 659 * 3 });
    expect(seen.filter((r) => r.path === '/ua').pop()!.headers['user-agent']).toMatch(/iPhone.*Mobile/);

    await capture({ url: `${pages.url}/ua`, device: 'iPhone 15', userAgent: 'GlimpseTest/1.0', width: 400, scale: 1 });
    expect(seen.filter((r) => r.path === '/ua').pop()!.headers['user-agent']).toBe('GlimpseTest/1.0');
  });

  it('headers and cookies reach the target origin, never a second origin the page loads from or is redirected to', async () => {
    const options = { headers: { 'X-Glimpse-Secret': 's3cr3t' }, cookies: [{ name: 'sid', value: 'abc123' }] };
    await capture({ url: `${pages.url}/with-third-party`, ...options });
    const page = seen.filter((r) => r.path === '/with-third-party').pop()!;
    const own = seen.filter((r) => r.path === '/own.png').pop()!;
    const third = seen.filter((r) => r.path === '/pixel.png').pop()!;
    expect(page.headers['x-glimpse-secret']).toBe('s3cr3t');
    expect(page.headers.cookie).toBe('sid=abc123');
    expect(own.headers['x-glimpse-secret']).toBe('s3cr3t');
    expect(third.headers['x-glimpse-secret']).toBeUndefined();
    expect(third.headers.cookie).toBeUndefined();

    const redirected = await capture({ url: `${pages.url}/to-other`, ...options });
    expect(redirected.status).toBe('done');
    expect(seen.filter((r) => r.path === '/to-other').pop()!.headers['x-glimpse-secret']).toBe('s3cr3t');
    const landing = seen.filter((r) => r.path === '/landing').pop()!;
    expect(landing.headers['x-glimpse-secret']).toBeUndefined();
    expect(landing.headers.cookie).toBeUndefined();
  });

  it('format pdf: served as application/pdf, %PDF- magic, A4 by default, the requested paper and orientation otherwise', async () => {
    const a4 = await capture({ url: `${pages.url}/doc`, format: 'pdf' });
    expect(a4).toMatchObject({ status: 'done', format: 'pdf' });
    expect(a4.url).toMatch(/\.pdf$/);
    const res = await fetch(a4.url);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    const file = Buffer.from(await res.arrayBuffer());
    if (LOOK_DIR) writeFileSync(`${LOOK_DIR}/a4.pdf`, file);
    expect(file.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    // A4 is 210 × 297 mm = 595.3 × 841.9 pt.
    const [w, h] = mediaBox(file);
    expect(Math.abs(w - 595.3)).toBeLessThan(2);
    expect(Math.abs(h - 841.9)).toBeLessThan(2);

    const letter = await capture({ url: `${pages.url}/doc`, format: 'pdf', pdf: { paper: 'Letter', landscape: true } });
    const [lw, lh] = mediaBox(await download(letter.url));
    expect(Math.abs(lw - 792)).toBeLessThan(2);
    expect(Math.abs(lh - 612)).toBeLessThan(2);
  });

  it('the upload route takes the options as form fields, objects and arrays as JSON text', async () => {
    const form = new FormData();
    form.append('file', new Blob([box], { type: 'text/html' }), 'box.html');
    form.append('clip', JSON.stringify({ x: 50, y: 70, width: 100, height: 50 }));
    form.append('scale', '2');
    form.append('hideSelectors', JSON.stringify(['#nothing']));
    form.append('darkMode', 'true');
    const res = await fetch(`${t.baseUrl}/v1/screenshot/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form,
    });
    expect(res.status).toBe(202);
    const body = await res.json();
    expect(body.options).toEqual({ clip: { x: 50, y: 70, width: 100, height: 50 }, scale: 2, hideSelectors: ['#nothing'], darkMode: true });
    const job = await waitForJob(t, key, body.id);
    const image = decodePng(await download(job.url));
    expect([image.width, image.height]).toEqual([200, 100]);
    expect(pixel(image, 100, 50)).toEqual([255, 0, 0]);

    const bad = new FormData();
    bad.append('file', new Blob([box], { type: 'text/html' }), 'box.html');
    bad.append('clip', '{"x": 1');
    const refused = await fetch(`${t.baseUrl}/v1/screenshot/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: bad,
    });
    expect(refused.status).toBe(400);
    expect((await refused.json()).details.fields[0].field).toBe('clip');
  });
});

/** Width and height in points of the first page's `/MediaBox` of a PDF. */
function mediaBox(pdf: Buffer): [number, number] {
  const match = /\/MediaBox\s*\[\s*([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*\]/.exec(pdf.toString('latin1'));
  if (!match) throw new Error('no MediaBox in the PDF');
  return [Number(match[3]) - Number(match[1]), Number(match[4]) - Number(match[2])];
}
