import { createHmac } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { DataSource } from 'typeorm';
import { UsersService } from '../../src/accounts/users.service';
import { ApiKeysService } from '../../src/auth/api-keys.service';
import { KeyCache } from '../../src/accounts/key-cache';
import { RenderLinksService } from '../../src/render/render-links.service';
import { isJpeg, pngSize } from '../support/images';
import { PageServer, startPageServer } from '../support/page-server';
import { startTestApp, TestApp, waitForJob } from '../support/test-app';
import { launchTestBrowser } from '../support/test-browser';

/** RFC 3986 percent-encoding, written here independently of the server's. */
const enc = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());

/** A signed render link as CONTRACT.md "Render links" describes it; `order` lists the parameters as sent (default: as given). */
function signedLink(base: string, keyId: string, secret: string, ext: string, params: Record<string, string>, order?: string[]): string {
  const path = `/v1/render/${keyId}.${ext}`;
  const pairs = Object.entries(params).map(([n, v]) => [enc(n), enc(v)]);
  const canonical = [...pairs]
    .sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([n, v]) => `${n}=${v}`)
    .join('&');
  const signature = createHmac('sha256', secret).update(`GET\n${path}\n${canonical}`).digest('hex');
  const sent = (order ?? Object.keys(params)).map((n) => `${enc(n)}=${enc(params[n])}`);
  return `${base}${path}?${[...sent, `signature=${signature}`].join('&')}`;
}

describe('render links', () => {
  let t: TestApp;
  let pages: PageServer;
  let key: string;
  let keyId: string;
  let rk: { id: string; secret: string };
  let db: DataSource;
  const held: (() => void)[] = [];

  beforeAll(async () => {
    pages = await startPageServer({
      '/': '<!doctype html><html><body style="margin:0;background:rgb(0,128,0)"><h1 style="color:white">render link</h1></body></html>',
      '/slow': (_req, res) => held.push(() => res.writeHead(200, { 'content-type': 'text/html' }).end('<h1>slow</h1>')),
    });
    t = await startTestApp({ env: { LEGACY_FREE_CAP: '0' } });
    db = t.get(DataSource);
    ({ key, keyId } = await t.createKey('pro'));
    rk = (await t.request('POST', '/v1/render-keys', { key, body: {} })).body;
  });

  afterAll(async () => {
    for (const release of held) release();
    await t.close();
    await pages.close();
  });

  const link = (params: Record<string, string>, ext = 'png', order?: string[]) =>
    signedLink(t.baseUrl, rk.id, rk.secret, ext, params, order);
  async function used(apiKeyId = keyId): Promise<number> {
    const [row] = await db.query('SELECT coalesce(sum(used), 0)::int AS used FROM quota_usage WHERE api_key_id = $1', [apiKeyId]);
    return row.used;
  }
  async function jobsFor(url: string): Promise<number> {
    const [row] = await db.query('SELECT count(*)::int AS n FROM screenshot_jobs WHERE target_url = $1', [url]);
    return row.n;
  }

  it('200: renders on a miss (counted once, an ordinary job), then answers from the cache (HIT, nothing counted)', async () => {
    const url = `${pages.url}/?first`;
    const before = await used();
    const miss = await fetch(link({ url, width: '640', height: '480' }));
    expect(miss.status).toBe(200);
    expect(miss.headers.get('content-type')).toBe('image/png');
    expect(miss.headers.get('x-glimpse-cache')).toBe('MISS');
    expect(miss.headers.get('etag')).toMatch(/^"[^"]+"$/);
    expect(miss.headers.get('cache-control')).toMatch(/^public, max-age=(86[34]\d\d)$/);
    expect(miss.headers.get('x-request-id')).toBeTruthy();
    expect(miss.headers.get('x-ratelimit-limit')).toBe('10000');
    const jobId = miss.headers.get('x-glimpse-job-id')!;
    const png = Buffer.from(await miss.arrayBuffer());
    expect(Number(miss.headers.get('content-length'))).toBe(png.length);
    expect(pngSize(png)).toEqual({ width: 640, height: 480 });
    expect(await used()).toBe(before + 1);
    const job = await t.request('GET', `/v1/screenshot/${jobId}`, { key });
    expect(job.body).toMatchObject({ status: 'done', width: 640, height: 480 });

    const hit = await fetch(link({ url, width: '640', height: '480' }));
    expect(hit.status).toBe(200);
    expect(hit.headers.get('x-glimpse-cache')).toBe('HIT');
    expect(hit.headers.get('x-glimpse-job-id')).toBe(jobId);
    expect(hit.headers.get('etag')).toBe(miss.headers.get('etag'));
    expect(Buffer.from(await hit.arrayBuffer()).equals(png)).toBe(true);
    expect(await used()).toBe(before + 1);
    expect(await jobsFor(url)).toBe(1);
  });

  it('does not depend on the order of the parameters', async () => {
    const params = { url: `${pages.url}/?order`, width: '500', height: '300', hideSelectors: '["h1"]' };
    const a = await fetch(link(params, 'png', ['width', 'url', 'hideSelectors', 'height']));
    expect(a.status).toBe(200);
    const b = await fetch(link(params, 'png', ['hideSelectors', 'height', 'url', 'width']));
    expect(b.status).toBe(200);
    expect(b.headers.get('x-glimpse-cache')).toBe('HIT');
    expect(b.headers.get('x-glimpse-job-id')).toBe(a.headers.get('x-glimpse-job-id'));
  });

  it("shares the API cache's rule of a fresh capture: a cache copy is never a source, so an older capture renders afresh", async () => {
    const url = `${pages.url}/?copy`;
    const body = { url, width: 420, height: 260, cache: true, cacheTtl: 7200 };
    const first = await t.request('POST', '/v1/screenshot', { key, body });
    await waitForJob(t, key, first.body.id);
    const copy = await t.request('POST', '/v1/screenshot', { key, body });
    expect(copy.body.cached).toBe(true);
    await waitForJob(t, key, copy.body.id);
    // The real capture completed two hours ago; only its copy is recent.
    await db.query(`UPDATE screenshot_jobs SET completed_at = completed_at - interval '2 hours' WHERE id = $1`, [first.body.id]);
    const res = await fetch(link({ url, width: '420', height: '260', cacheTtl: '3600' }));
    expect(res.status).toBe(200);
    expect(res.headers.get('x-glimpse-cache')).toBe('MISS');
    expect([first.body.id, copy.body.id]).not.toContain(res.headers.get('x-glimpse-job-id'));
    expect(await jobsFor(url)).toBe(3);
  });

  it('304 on a matching If-None-Match; HEAD answers the headers without a body; other formats by extension', async () => {
    const href = link({ url: `${pages.url}/?first`, width: '640', height: '480' });
    const first = await fetch(href);
    await first.arrayBuffer();
    const notModified = await fetch(href, { headers: { 'if-none-match': first.headers.get('etag')! } });
    expect(notModified.status).toBe(304);
    expect(notModified.headers.get('etag')).toBe(first.headers.get('etag'));
    const head = await fetch(href, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(first.headers.get('content-length'));
    expect(head.headers.get('x-glimpse-cache')).toBe('HIT');
    expect((await head.arrayBuffer()).byteLength).toBe(0);
    const jpeg = await fetch(link({ url: `${pages.url}/?first`, width: '640', height: '480' }, 'jpeg'));
    expect(jpeg.status).toBe(200);
    expect(jpeg.headers.get('content-type')).toBe('image/jpeg');
    expect(isJpeg(Buffer.from(await jpeg.arrayBuffer()))).toBe(true);
  });

  it('401 INVALID_SIGNATURE for a missing or wrong signature, an unknown or deleted render key, a revoked API key', async () => {
    const params = { url: `${pages.url}/?first`, width: '640', height: '480' };
    const good = link(params);
    const expect401 = async (href: string) => {
      const res = await fetch(href);
      expect(res.status).toBe(401);
      const body = await res.json();
      expect(body).toMatchObject({ code: 'INVALID_SIGNATURE', requestId: expect.any(String) });
      expect(res.headers.get('x-request-id')).toBe(body.requestId);
    };
    await expect401(good.replace(/&signature=[0-9a-f]+$/, ''));
    await expect401(good.replace(/signature=([0-9a-f])/, (_m, c) => `signature=${c === 'a' ? 'b' : 'a'}`));
    await expect401(good.replace('width=640', 'width=641'));
    await expect401(signedLink(t.baseUrl, 'rk_000000000000000000000000', rk.secret, 'png', params));
    await expect401(signedLink(t.baseUrl, rk.id, 'rks_wrong', 'png', params));

    const other = await t.createKey('pro');
    const doomed = (await t.request('POST', '/v1/render-keys', { key: other.key, body: {} })).body;
    const doomedLink = signedLink(t.baseUrl, doomed.id, doomed.secret, 'png', params);
    expect((await fetch(doomedLink)).status).toBe(200);
    await t.get(ApiKeysService).revoke(other.keyId);
    await expect401(doomedLink);
    const another = await t.createKey('pro');
    const deleted = (await t.request('POST', '/v1/render-keys', { key: another.key, body: {} })).body;
    expect((await t.request('DELETE', `/v1/render-keys/${deleted.id}`, { key: another.key })).status).toBe(204);
    await expect401(signedLink(t.baseUrl, deleted.id, deleted.secret, 'png', params));
  });

  it('a revocation or deletion made by another process refuses the link at once, right after cached hits', async () => {
    const params = { url: `${pages.url}/?first`, width: '640', height: '480' };
    // Another API replica or the admin CLI: its own connection and its own cache of key lookups.
    const elsewhere = new KeyCache(t.config);
    try {
      const revoked = await t.createKey('pro');
      const byRevoked = (await t.request('POST', '/v1/render-keys', { key: revoked.key, body: {} })).body;
      const revokedLink = signedLink(t.baseUrl, byRevoked.id, byRevoked.secret, 'png', params);
      const deletedOwner = await t.createKey('pro');
      const deleted = (await t.request('POST', '/v1/render-keys', { key: deletedOwner.key, body: {} })).body;
      const deletedLink = signedLink(t.baseUrl, deleted.id, deleted.secret, 'png', params);
      // The first request of each renders (a new account), the second is a hit with the key lookup cached.
      for (const href of [revokedLink, revokedLink, deletedLink, deletedLink]) {
        const res = await fetch(href);
        expect(res.status).toBe(200);
        await res.arrayBuffer();
      }
      await db.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [revoked.keyId]);
      await db.query('DELETE FROM render_keys WHERE id = $1', [deleted.id]);
      await elsewhere.bump();
      expect((await fetch(revokedLink)).status).toBe(401);
      expect((await fetch(deletedLink)).status).toBe(401);
      expect((await t.request('GET', '/v1/render-keys', { key: revoked.key })).status).toBe(401);
    } finally {
      await elsewhere.onModuleDestroy();
    }
  });

  it("answers fresh hits before the Nest pipeline with the full route's headers; a revoked key's cached link is refused at the very next request", async () => {
    const links = t.get(RenderLinksService);
    const render = jest.spyOn(links, 'render');
    const recentHit = jest.spyOn(links, 'recentHit');
    try {
      const owner = await t.createKey('pro');
      const ownRenderKey = (await t.request('POST', '/v1/render-keys', { key: owner.key, body: {} })).body;
      const href = signedLink(t.baseUrl, ownRenderKey.id, ownRenderKey.secret, 'png', {
        url: `${pages.url}/?hit-route`,
        width: '320',
        height: '200',
      });
      const miss = await fetch(href, { headers: { 'x-request-id': 'miss-request-0001' } });
      const missBody = Buffer.from(await miss.arrayBuffer());
      expect(miss.headers.get('x-glimpse-cache')).toBe('MISS');
      expect(render).toHaveBeenCalledTimes(1);

      const hit = await fetch(href, { headers: { 'x-request-id': 'hit-request-00001' } });
      expect(hit.status).toBe(200);
      expect(Buffer.from(await hit.arrayBuffer()).equals(missBody)).toBe(true);
      // Answered by the hit route: the full route's handler did not run again.
      expect(render).toHaveBeenCalledTimes(1);
      const names = (res: Response) => {
        const seen: string[] = [];
        res.headers.forEach((_value, name) => seen.push(name));
        return seen.filter((n) => !['date', 'connection', 'keep-alive'].includes(n)).sort();
      };
      expect(names(hit)).toEqual(names(miss));
      expect(hit.headers.get('x-request-id')).toBe('hit-request-00001');
      expect(hit.headers.get('x-glimpse-cache')).toBe('HIT');
      expect(hit.headers.get('cache-control')).toMatch(/^public, max-age=86[34]\d\d$/);
      for (const name of ['etag', 'content-type', 'content-length', 'x-glimpse-job-id', 'x-ratelimit-limit', 'x-ratelimit-reset'])
        expect([name, hit.headers.get(name)]).toEqual([name, miss.headers.get(name)]);
      expect(hit.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);

      const notModified = await fetch(href, { headers: { 'if-none-match': hit.headers.get('etag')! } });
      expect(notModified.status).toBe(304);
      expect(notModified.headers.get('etag')).toBe(hit.headers.get('etag'));
      expect(notModified.headers.get('x-request-id')).toMatch(/^req_/);
      expect(notModified.headers.get('x-ratelimit-limit')).toBe(miss.headers.get('x-ratelimit-limit'));
      const head = await fetch(href, { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(head.headers.get('content-length')).toBe(String(missBody.length));
      expect(render).toHaveBeenCalledTimes(1);

      await t.get(ApiKeysService).revoke(owner.keyId);
      recentHit.mockClear();
      const refused = await fetch(href);
      expect(refused.status).toBe(401);
      expect(await refused.json()).toMatchObject({ code: 'INVALID_SIGNATURE' });
      // Refused by the key lookup, before any cached capture was looked at.
      expect(recentHit).not.toHaveBeenCalled();
    } finally {
      render.mockRestore();
      recentHit.mockRestore();
    }
  });

  it('a link the hit route remembers stops at its expires, and one signed by the previous secret at the end of the overlap', async () => {
    const owner = await t.createKey('pro');
    const own = (await t.request('POST', '/v1/render-keys', { key: owner.key, body: {} })).body;
    const params = { url: `${pages.url}/?remembered`, width: '320', height: '200' };
    expect((await fetch(signedLink(t.baseUrl, own.id, own.secret, 'png', params))).status).toBe(200);
    /** Requests `href` until it stops answering 200 (at most 15 s); its answer then, and when it came. */
    const untilRefused = async (href: string) => {
      const deadline = Date.now() + 15_000;
      for (;;) {
        const res = await fetch(href);
        if (res.status !== 200) return { at: Date.now(), status: res.status, code: (await res.json()).code };
        await res.arrayBuffer();
        if (Date.now() > deadline) throw new Error(`${href} still answered 200 after 15 s`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    const render = jest.spyOn(t.get(RenderLinksService), 'render');
    try {
      // The capture is cached (expires is no option): answered by the hit route, which remembers the link.
      const expiresS = Math.floor(Date.now() / 1000) + 3;
      const expiring = signedLink(t.baseUrl, own.id, own.secret, 'png', { ...params, expires: String(expiresS) });
      expect((await fetch(expiring)).status).toBe(200);
      expect(render).not.toHaveBeenCalled();
      const expired = await untilRefused(expiring);
      expect(expired).toMatchObject({ status: 403, code: 'RENDER_LINK_EXPIRED' });
      expect(expired.at).toBeGreaterThanOrEqual(expiresS * 1000);

      const byOldSecret = signedLink(t.baseUrl, own.id, own.secret, 'png', params);
      const rotatedAt = Date.now();
      expect((await t.request('POST', `/v1/render-keys/${own.id}/rotate`, { key: owner.key, body: { expiresInSeconds: 2 } })).status).toBe(
        200,
      );
      expect((await fetch(byOldSecret)).status).toBe(200);
      const ended = await untilRefused(byOldSecret);
      expect(ended).toMatchObject({ status: 401, code: 'INVALID_SIGNATURE' });
      expect(ended.at).toBeGreaterThanOrEqual(rotatedAt + 2_000);
    } finally {
      render.mockRestore();
    }
  });

  it('403 RENDER_LINK_EXPIRED for a past expires, 403 HOST_NOT_ALLOWED outside allowedHosts, 414 over 8,192 characters, 400 for invalid options', async () => {
    const expired = await fetch(link({ url: `${pages.url}/`, expires: String(Math.floor(Date.now() / 1000) - 10) }));
    expect(expired.status).toBe(403);
    expect((await expired.json()).code).toBe('RENDER_LINK_EXPIRED');
    const future = await fetch(
      link({ url: `${pages.url}/?first`, width: '640', height: '480', expires: String(Math.floor(Date.now() / 1000) + 3600) }),
    );
    expect(future.status).toBe(200);

    const narrow = (await t.request('POST', '/v1/render-keys', { key, body: { allowedHosts: ['example.com', '*.example.org'] } })).body;
    const outside = await fetch(signedLink(t.baseUrl, narrow.id, narrow.secret, 'png', { url: `${pages.url}/` }));
    expect(outside.status).toBe(403);
    expect((await outside.json()).code).toBe('HOST_NOT_ALLOWED');

    const long = await fetch(link({ url: `${pages.url}/?${'a'.repeat(8200)}` }));
    expect(long.status).toBe(414);
    expect((await long.json()).code).toBe('URI_TOO_LONG');

    const invalid: Record<string, string>[] = [
      { url: `${pages.url}/`, width: '50' },
      { url: `${pages.url}/`, format: 'png' },
      { url: `${pages.url}/`, cookies: 'not json' },
      { url: 'ftp://example.com' },
    ];
    for (const params of invalid) {
      const res = await fetch(link(params));
      expect(res.status).toBe(400);
      expect((await res.json()).code).toBe('VALIDATION_FAILED');
    }
  });

  it('422 CAPTURE_FAILED with the job error, remembered for 60 s without a new job or quota', async () => {
    const url = 'http://127.0.0.1:9/';
    const before = await used();
    const first = await fetch(link({ url }));
    expect(first.status).toBe(422);
    expect(await first.json()).toMatchObject({ code: 'CAPTURE_FAILED', error: expect.any(String) });
    const again = await fetch(link({ url }));
    expect(again.status).toBe(422);
    expect(await jobsFor(url)).toBe(1);
    expect(await used()).toBe(before + 1);
  });

  it('429 PLAN_QUOTA_EXCEEDED over quota on a miss, nothing created', async () => {
    const poor = await t.createKey('legacy_free');
    const prk = (await t.request('POST', '/v1/render-keys', { key: poor.key, body: {} })).body;
    const res = await fetch(signedLink(t.baseUrl, prk.id, prk.secret, 'png', { url: `${pages.url}/?poor` }));
    expect(res.status).toBe(429);
    expect((await res.json()).code).toBe('PLAN_QUOTA_EXCEEDED');
    expect(await jobsFor(`${pages.url}/?poor`)).toBe(0);
  });

  it('single flight: identical links requested at once make one job and count one unit of quota', async () => {
    const url = `${pages.url}/?flight`;
    const before = await used();
    const answers = await Promise.all(Array.from({ length: 12 }, () => fetch(link({ url, width: '320', height: '240' }))));
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    expect(new Set(answers.map((a) => a.headers.get('x-glimpse-job-id'))).size).toBe(1);
    await Promise.all(answers.map((a) => a.arrayBuffer()));
    expect(await jobsFor(url)).toBe(1);
    expect(await used()).toBe(before + 1);
  });

  it('rotation: the old secret signs during the overlap, the new one at once; without overlap the old one stops', async () => {
    const own = (await t.request('POST', '/v1/render-keys', { key, body: {} })).body;
    const params = { url: `${pages.url}/?first`, width: '640', height: '480' };
    const oldLink = signedLink(t.baseUrl, own.id, own.secret, 'png', params);
    expect((await fetch(oldLink)).status).toBe(200);
    const rotated = (await t.request('POST', `/v1/render-keys/${own.id}/rotate`, { key, body: { expiresInSeconds: 600 } })).body;
    expect((await fetch(oldLink)).status).toBe(200);
    expect((await fetch(signedLink(t.baseUrl, own.id, rotated.secret, 'png', params))).status).toBe(200);
    const again = (await t.request('POST', `/v1/render-keys/${own.id}/rotate`, { key, body: {} })).body;
    expect((await fetch(oldLink)).status).toBe(401);
    expect((await fetch(signedLink(t.baseUrl, own.id, rotated.secret, 'png', params))).status).toBe(401);
    expect((await fetch(signedLink(t.baseUrl, own.id, again.secret, 'png', params))).status).toBe(200);
  });

  it('an <img> pointing at a render link shows the page in a real Chromium page', async () => {
    const src = link({ url: `${pages.url}/?img`, width: '400', height: '300' });
    const browser = await launchTestBrowser(t.config);
    try {
      const page = await browser.newPage({ viewport: { width: 600, height: 400 } });
      const host = await startPageServer({
        '/': `<!doctype html><body style="margin:0;background:#fff"><p>og:image preview</p><img id="shot" src="${src.replace(/&/g, '&amp;')}"></body>`,
      });
      try {
        await page.goto(host.url);
        const size = await page.waitForFunction(
          () => {
            const img = document.getElementById('shot') as HTMLImageElement;
            return img.complete && img.naturalWidth > 0 ? { width: img.naturalWidth, height: img.naturalHeight } : null;
          },
          undefined,
          { timeout: 60_000 },
        );
        expect(await size.jsonValue()).toEqual({ width: 400, height: 300 });
        if (process.env.RENDER_LINK_SCREENSHOT) writeFileSync(process.env.RENDER_LINK_SCREENSHOT, await page.screenshot());
      } finally {
        await host.close();
      }
    } finally {
      await browser.close();
    }
  });

  it('dashboard Render links page: create a key (secret shown once), sign a link with it and preview it, rotate, delete', async () => {
    const owner = await t.createKey('pro');
    const email = `render-${owner.accountId}@test.local`;
    const { setPasswordUrl } = await t.get(UsersService).create(owner.accountId, email, 'owner');
    const browser = await launchTestBrowser(t.config);
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 1100 }, baseURL: t.baseUrl });
      await page.goto(setPasswordUrl);
      await page.getByLabel('New password').fill('correct horse battery staple');
      await page.getByLabel('Repeat the password').fill('correct horse battery staple');
      await page.getByRole('button', { name: 'Set password and sign in' }).click();
      await page.waitForURL('**/dashboard');
      await page.getByRole('link', { name: 'Render links' }).click();
      await page.getByLabel('Description').fill('Open Graph images');
      await page.getByRole('button', { name: 'Create render key' }).click();
      const secret = (await page.getByTestId('new-render-key-secret').textContent())!;
      expect(secret).toMatch(/^rks_[0-9A-Za-z]{40}$/);
      const renderKeyId = (await page.getByTestId('new-render-key-id').textContent())!;

      await page.getByLabel('Its secret').fill('rks_wrong');
      await page.getByLabel('Page URL').fill(`${pages.url}/?dashboard`);
      await page.getByRole('button', { name: 'Sign link' }).click();
      expect(await page.getByRole('alert').textContent()).toContain('does not belong to this render key');
      await page.getByLabel('Its secret').fill(secret);
      await page.getByLabel('Width (px)').fill('400');
      await page.getByLabel('Height (px)').fill('300');
      await page.getByRole('button', { name: 'Sign link' }).click();
      const href = (await page.getByTestId('built-link').textContent())!;
      expect(href.startsWith(`${t.baseUrl}/v1/render/${renderKeyId}.png?`)).toBe(true);
      expect(await page.content()).not.toContain(secret);
      const size = await page.waitForFunction(
        () => {
          const img = document.getElementById('built-preview') as HTMLImageElement;
          return img.complete && img.naturalWidth > 0 ? { width: img.naturalWidth, height: img.naturalHeight } : null;
        },
        undefined,
        { timeout: 60_000 },
      );
      expect(await size.jsonValue()).toEqual({ width: 400, height: 300 });
      if (process.env.RENDER_LINKS_PAGE_SCREENSHOT)
        await page.screenshot({ path: process.env.RENDER_LINKS_PAGE_SCREENSHOT, fullPage: true });

      await page.getByText('Rotate…').click();
      await page.getByRole('button', { name: 'Rotate secret' }).click();
      expect(await page.getByTestId('rotated-render-key-secret').textContent()).toMatch(/^rks_/);
      expect((await fetch(href)).status).toBe(401);
      await page.getByText('Delete…').click();
      await page.getByRole('button', { name: 'Delete render key' }).click();
      await page.waitForURL('**/dashboard/render-links');
      expect(await page.getByText('No render keys yet.').count()).toBe(1);
    } finally {
      await browser.close();
    }
  });
});

describe('render links: pending, across replicas', () => {
  let t: TestApp;
  let replica: TestApp;
  let key: string;
  let keyId: string;

  beforeAll(async () => {
    // No processors: a render never ends here, so every miss waits out RENDER_WAIT_MS.
    t = await startTestApp({ runProcessors: false, env: { RENDER_WAIT_MS: '300' } });
    replica = await startTestApp({ runProcessors: false, env: { RENDER_WAIT_MS: '300' } });
    ({ key, keyId } = await t.createKey('pro'));
  });

  afterAll(async () => {
    await t.close();
    await replica.close();
  });

  it('503 RENDER_PENDING with Retry-After and no-store; identical links on two API replicas join one job', async () => {
    const rk = (await t.request('POST', '/v1/render-keys', { key, body: {} })).body;
    const url = 'http://127.0.0.1:9/pending';
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => fetch(signedLink((i % 2 ? replica : t).baseUrl, rk.id, rk.secret, 'png', { url }))),
    );
    for (const res of answers) {
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect((await res.json()).code).toBe('RENDER_PENDING');
    }
    const db = t.get(DataSource);
    const [jobs] = await db.query('SELECT count(*)::int AS n FROM screenshot_jobs WHERE target_url = $1', [url]);
    expect(jobs.n).toBe(1);
    const [quota] = await db.query('SELECT coalesce(sum(used), 0)::int AS used FROM quota_usage WHERE api_key_id = $1', [keyId]);
    expect(quota.used).toBe(1);
  });
});
