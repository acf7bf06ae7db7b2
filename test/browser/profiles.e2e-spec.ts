import { createHmac, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import sharp from 'sharp';
import { DataSource } from 'typeorm';
import { PageServer, startPageServer } from '../support/page-server';
import { download, waitForRun } from '../support/runs';
import { startTestApp, TestApp, waitForJob } from '../support/test-app';

/**
 * Browser profiles (CONTRACT.md, "Browser profiles (logged-in captures)") end to end: a loopback site
 * with a login form (a session cookie and a localStorage token) is logged in to by a run with
 * `saveProfile`, then captured logged in by a capture, a render link and a monitor.
 */

/** The site's user and the secrets it hands out (asserted never to be stored in the clear or returned). */
const USER = { login: 'ada', password: 'correct horse battery staple', name: 'Ada Lovelace' };

/** Whether the pixel at the centre of a PNG is mostly green (logged in) rather than red (signed out). */
async function centre(png: Buffer): Promise<'green' | 'red' | 'other'> {
  const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
  const i = (Math.floor(info.height / 2) * info.width + Math.floor(info.width / 2)) * info.channels;
  const [r, g, b] = [data[i], data[i + 1], data[i + 2]];
  if (g > 150 && r < 80 && b < 80) return 'green';
  if (r > 150 && g < 80 && b < 80) return 'red';
  return 'other';
}

/** RFC 3986 percent-encoding, as CONTRACT.md "Render links" signs it (written here independently of the server). */
const enc = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());

function signedLink(base: string, keyId: string, secret: string, params: Record<string, string>): string {
  const path = `/v1/render/${keyId}.png`;
  const query = Object.entries(params)
    .map(([n, v]) => [enc(n), enc(v)])
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([n, v]) => `${n}=${v}`)
    .join('&');
  return `${base}${path}?${query}&signature=${createHmac('sha256', secret).update(`GET\n${path}\n${query}`).digest('hex')}`;
}

describe('browser profiles', () => {
  let t: TestApp;
  let site: PageServer;
  let db: DataSource;
  let key: string;
  let keyId: string;
  let accountId: string;
  /** Session ids the site issued, and the localStorage tokens it handed out. */
  const sessions = new Set<string>();
  const tokens = new Set<string>();
  /** The Cookie header of every request the site received, by path. */
  const cookiesSeen: { path: string; cookie: string }[] = [];

  const sessionOf = (req: IncomingMessage) => /(?:^|;\s*)sid=([^;]+)/.exec(req.headers.cookie ?? '')?.[1];
  const html = (res: ServerResponse, body: string, headers: Record<string, string | string[]> = {}) =>
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...headers }).end(`<!doctype html><html>${body}</html>`);

  beforeAll(async () => {
    site = await startPageServer({
      '/login': (_req, res) =>
        html(
          res,
          '<body><form method="post" action="/session"><input id="user" name="user"><input id="password" name="password" type="password">' +
            '<button id="go" type="submit">Sign in</button></form></body>',
        ),
      '/session': (req, res) => {
        let body = '';
        req.on('data', (chunk: Buffer) => (body += chunk.toString()));
        req.on('end', () => {
          const form = new URLSearchParams(body);
          if (form.get('user') !== USER.login || form.get('password') !== USER.password) {
            res.writeHead(403).end('wrong password');
            return;
          }
          const sid = randomBytes(16).toString('hex');
          const token = `tok-${randomBytes(8).toString('hex')}`;
          sessions.add(sid);
          tokens.add(token);
          // The token goes to localStorage, then the browser goes on to the account page.
          html(res, `<body><script>localStorage.setItem('token', '${token}'); location.href = '/account';</script></body>`, {
            'set-cookie': `sid=${sid}; Path=/; HttpOnly; SameSite=Lax`,
          });
        });
      },
      // Logged in (a known session cookie): green with the user's name; otherwise red. The token comes from localStorage.
      '/account': (req, res) => {
        cookiesSeen.push({ path: '/account', cookie: req.headers.cookie ?? '' });
        const sid = sessionOf(req);
        const inside = sid && sessions.has(sid);
        html(
          res,
          `<body style="margin:0;background:${inside ? 'rgb(0,200,0)' : 'rgb(220,0,0)'}">` +
            (inside ? `<h1 id="who">${USER.name}</h1>` : '<h1 id="login">Please sign in</h1>') +
            '<p id="token"></p><img src="/pixel" width="1" height="1">' +
            "<script>document.getElementById('token').textContent = 'token: ' + (localStorage.getItem('token') ?? 'none');</script></body>",
        );
      },
      '/pixel': (req, res) => {
        cookiesSeen.push({ path: '/pixel', cookie: req.headers.cookie ?? '' });
        res.writeHead(204).end();
      },
    });
    t = await startTestApp({ env: { WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex'), CAPTURE_TIMEOUT_MS: '4000' } });
    db = t.get(DataSource);
    ({ key, keyId, accountId } = await t.createKey('pro'));
  });

  afterAll(async () => {
    await t?.close();
    await site?.close();
  });

  const account = () => `${site.url}/account`;
  /** The same site under another host name: `localhost` instead of `127.0.0.1`. */
  const otherHost = (path: string) => `http://localhost:${site.port}${path}`;

  async function used(): Promise<number> {
    const [row] = await db.query('SELECT coalesce(sum(used), 0)::int AS used FROM quota_usage WHERE api_key_id = $1', [keyId]);
    return row.used;
  }

  async function capture(body: Record<string, unknown>, apiKey = key): Promise<any> {
    const res = await t.request('POST', '/v1/screenshot', { key: apiKey, body: { width: 400, height: 300, ...body } });
    expect(res.status).toBe(202);
    return waitForJob(t, apiKey, res.body.id);
  }

  async function textOf(job: any): Promise<string> {
    expect(job.status).toBe('done');
    return (await download(job.extracted.text.url)).data.toString('utf8');
  }

  /** Records a login with a run: sign in with a sensitive password, visit the other host (it sets a cookie there), come back. */
  let profileId: string;
  beforeAll(async () => {
    const run = await t.request('POST', '/v1/runs', {
      key,
      body: {
        url: `${site.url}/login`,
        video: false,
        width: 400,
        height: 300,
        steps: [
          { action: 'fill', selector: '#user', value: USER.login },
          { action: 'fill', selector: '#password', value: USER.password, sensitive: true },
          { action: 'click', selector: '#go' },
          { action: 'waitForSelector', selector: '#who' },
          { action: 'evaluate', script: `document.cookie = 'other=elsewhere; path=/'; 1` },
          { action: 'goto', url: otherHost('/login') },
          { action: 'evaluate', script: `document.cookie = 'foreign=1; path=/'; localStorage.setItem('foreign', '1'); 1` },
        ],
        saveProfile: { name: 'Ada on the test site', allowedDomains: ['127.0.0.1'] },
      },
    });
    expect(run.status).toBe(202);
    expect(run.body.savedProfileId).toBeNull();
    const ended = await waitForRun(t, key, run.body.id);
    expect(ended).toMatchObject({ status: 'completed', finalizationError: null });
    expect(ended.savedProfileId).toMatch(/^prf_[0-9A-Za-z]{24}$/);
    profileId = ended.savedProfileId;
  });

  it('a run with saveProfile stores the logged-in state, filtered to allowedDomains, sealed and never returned', async () => {
    const got = await t.request('GET', `/v1/profiles/${profileId}`, { key });
    expect(got.status).toBe(200);
    // sid and `other` on 127.0.0.1 kept; `foreign` on localhost dropped; one origin (127.0.0.1) of two kept.
    expect(got.body).toMatchObject({
      id: profileId,
      name: 'Ada on the test site',
      allowedDomains: ['127.0.0.1'],
      cookieCount: 2,
      originCount: 1,
    });
    expect(got.body.sizeBytes).toBeGreaterThan(0);
    const [sid] = [...sessions];
    const [token] = [...tokens];
    const list = await t.request('GET', '/v1/profiles', { key });
    for (const answer of [JSON.stringify(got.body), JSON.stringify(list.body)]) {
      expect(answer).not.toContain(sid);
      expect(answer).not.toContain(token);
    }
    // The row holds ciphertext only (WEBHOOK_SECRET_KEY is set): neither the cookie nor the token, nor the cookie names.
    const [row] = await db.query('SELECT state_sealed FROM profiles WHERE id = $1', [profileId]);
    expect(row.state_sealed).toMatch(/^v1\./);
    for (const plain of [sid, token, 'sid', 'localStorage', USER.password]) expect(row.state_sealed).not.toContain(plain);
    // The run's own row keeps no password either (a sensitive fill), and names the saved profile.
    const [runRow] = await db.query(`SELECT steps::text, saved_profile_id FROM runs WHERE saved_profile_id = $1`, [profileId]);
    expect(runRow.steps).not.toContain(USER.password);
  });

  it('a capture with the profile is logged in: the page shows the user name and the localStorage token; without it, it is not', async () => {
    const inside = await capture({ url: account(), profile: profileId, extract: ['text'] });
    const text = await textOf(inside);
    expect(text).toContain(USER.name);
    expect(text).toContain(`token: ${[...tokens][0]}`);
    expect(await centre((await download(inside.url)).data)).toBe('green');
    expect(inside.options).toEqual({ width: 400, height: 300, profile: profileId, extract: ['text'] });

    const outside = await capture({ url: account(), extract: ['text'] });
    expect(await textOf(outside)).toContain('Please sign in');
    expect(await textOf(outside)).toContain('token: none');
    expect(await centre((await download(outside.url)).data)).toBe('red');

    const profile = await t.request('GET', `/v1/profiles/${profileId}`, { key });
    expect(profile.body.lastUsedAt).not.toBeNull();
  });

  it('a run with the profile starts logged in; a run that fails saves nothing into its saveProfile', async () => {
    const before = (await db.query('SELECT state_version FROM profiles WHERE id = $1', [profileId]))[0].state_version;
    const inside = await t.request('POST', '/v1/runs', {
      key,
      body: { url: account(), profile: profileId, video: false, steps: [{ action: 'waitForSelector', selector: '#who', timeoutMs: 3000 }] },
    });
    expect(inside.status).toBe(202);
    expect(await waitForRun(t, key, inside.body.id)).toMatchObject({ status: 'completed', savedProfileId: null });
    const failing = await t.request('POST', '/v1/runs', {
      key,
      body: {
        url: account(),
        video: false,
        steps: [{ action: 'click', selector: '#missing', timeoutMs: 500 }],
        saveProfile: { profileId },
      },
    });
    expect(await waitForRun(t, key, failing.body.id)).toMatchObject({ status: 'failed', savedProfileId: null });
    expect((await db.query('SELECT state_version FROM profiles WHERE id = $1', [profileId]))[0].state_version).toBe(before);
  });

  it('a render link with the profile is logged in (pixels), cached apart from the same link without it', async () => {
    const rk = (await t.request('POST', '/v1/render-keys', { key, body: {} })).body;
    const withProfile = signedLink(t.baseUrl, rk.id, rk.secret, { url: account(), width: '400', height: '300', profile: profileId });
    const without = signedLink(t.baseUrl, rk.id, rk.secret, { url: account(), width: '400', height: '300' });
    const a = await fetch(without);
    expect(a.status).toBe(200);
    expect(await centre(Buffer.from(await a.arrayBuffer()))).toBe('red');
    const b = await fetch(withProfile);
    expect(b.status).toBe(200);
    expect(b.headers.get('x-glimpse-cache')).toBe('MISS');
    expect(await centre(Buffer.from(await b.arrayBuffer()))).toBe('green');
    const again = await fetch(withProfile);
    expect(again.headers.get('x-glimpse-cache')).toBe('HIT');
    expect(await centre(Buffer.from(await again.arrayBuffer()))).toBe('green');

    // A host outside allowedDomains is refused before anything renders.
    const refused = await fetch(signedLink(t.baseUrl, rk.id, rk.secret, { url: otherHost('/account'), profile: profileId }));
    expect(refused.status).toBe(400);
    expect((await refused.json()).code).toBe('PROFILE_DOMAIN_NOT_ALLOWED');
  });

  it('a monitor with the profile checks the page logged in', async () => {
    const created = await t.request('POST', '/v1/monitors', {
      key,
      body: {
        url: account(),
        width: 400,
        height: 300,
        profile: profileId,
        profileCheck: { selector: '#who' },
        schedule: { intervalSeconds: 3600 },
        enabled: false,
      },
    });
    expect(created.status).toBe(201);
    expect(created.body.options).toMatchObject({ profile: profileId, profileCheck: { selector: '#who' } });
    const started = await t.request('POST', `/v1/monitors/${created.body.id}/check`, { key });
    expect(started.status).toBe(202);
    let check: any;
    const deadline = Date.now() + 30_000;
    do {
      await new Promise((r) => setTimeout(r, 200));
      const checks = await t.request('GET', `/v1/monitors/${created.body.id}/checks`, { key });
      check = checks.body.data.find((c: any) => c.id === started.body.checkId);
    } while ((!check || check.status === 'pending') && Date.now() < deadline);
    expect(check.status).toBe('baseline');
    expect(await centre((await download(check.screenshotUrl)).data)).toBe('green');

    // A monitor on a host outside allowedDomains: 400, nothing created.
    const refused = await t.request('POST', '/v1/monitors', {
      key,
      body: { url: otherHost('/account'), profile: profileId, schedule: { intervalSeconds: 3600 } },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('PROFILE_DOMAIN_NOT_ALLOWED');
  });

  it('the capture cache never answers a request with a profile from one without it, nor from an older state of the profile', async () => {
    const url = `${account()}?cache-test`;
    const plain = await capture({ url, cache: true });
    expect(await centre((await download(plain.url)).data)).toBe('red');
    const first = await capture({ url, cache: true, profile: profileId });
    expect(first.cached).toBe(false);
    expect(await centre((await download(first.url)).data)).toBe('green');
    const second = await capture({ url, cache: true, profile: profileId });
    expect(second.cached).toBe(true);
    expect(await centre((await download(second.url)).data)).toBe('green');
    const plainAgain = await capture({ url, cache: true });
    expect(plainAgain.cached).toBe(true);
    expect(await centre((await download(plainAgain.url)).data)).toBe('red');

    // A second profile with the same state is another profile: never served the first one's capture.
    const copy = await t.request('POST', '/v1/profiles', {
      key,
      body: { name: 'copy', allowedDomains: ['127.0.0.1'], storageState: { cookies: [] } },
    });
    const other = await capture({ url, cache: true, profile: copy.body.id });
    expect(other.cached).toBe(false);

    // Changing the profile's domains is a new state version: the next capture is real again.
    const changed = await t.request('PATCH', `/v1/profiles/${profileId}`, {
      key,
      body: { allowedDomains: ['127.0.0.1', '*.example.com'] },
    });
    expect(changed.status).toBe(200);
    const afterChange = await capture({ url, cache: true, profile: profileId });
    expect(afterChange.cached).toBe(false);
    expect(await centre((await download(afterChange.url)).data)).toBe('green');
    await t.request('DELETE', `/v1/profiles/${copy.body.id}`, { key });
  });

  it('a target outside allowedDomains is 400 PROFILE_DOMAIN_NOT_ALLOWED with nothing created or counted', async () => {
    const before = await used();
    const [{ n: jobsBefore }] = await db.query('SELECT count(*)::int AS n FROM screenshot_jobs WHERE account_id = $1', [accountId]);
    const res = await t.request('POST', '/v1/screenshot', { key, body: { url: otherHost('/account'), profile: profileId } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'PROFILE_DOMAIN_NOT_ALLOWED', details: { field: 'profile', host: 'localhost' } });
    const batch = await t.request('POST', '/v1/screenshot/batch', {
      key,
      body: {
        items: [
          { url: account(), profile: profileId },
          { url: otherHost('/account'), profile: profileId },
        ],
      },
    });
    expect(batch.status).toBe(400);
    expect(batch.body).toMatchObject({ code: 'PROFILE_DOMAIN_NOT_ALLOWED', details: { field: 'items[1].profile' } });
    const run = await t.request('POST', '/v1/runs', { key, body: { url: otherHost('/login'), profile: profileId, video: false } });
    expect(run.status).toBe(400);
    expect(run.body.code).toBe('PROFILE_DOMAIN_NOT_ALLOWED');
    expect(await used()).toBe(before);
    const [{ n: jobsAfter }] = await db.query('SELECT count(*)::int AS n FROM screenshot_jobs WHERE account_id = $1', [accountId]);
    expect(jobsAfter).toBe(jobsBefore);
    // profileCheck needs a profile; uploads take neither.
    const check = await t.request('POST', '/v1/screenshot', { key, body: { url: account(), profileCheck: { selector: '#who' } } });
    expect(check.status).toBe(400);
    expect(check.body.details.fields).toEqual([{ field: 'profileCheck', message: 'is only allowed with profile' }]);
  });

  it('cookies and origins outside allowedDomains are dropped at save and never sent', async () => {
    const created = await t.request('POST', '/v1/profiles', {
      key,
      body: {
        name: 'uploaded',
        allowedDomains: ['127.0.0.1'],
        storageState: {
          cookies: [
            // Hand-written: the fields Playwright always writes may be left out.
            { name: 'sid', value: [...sessions][0], domain: '127.0.0.1', httpOnly: true },
            { name: 'leak', value: 'must-not-travel', domain: 'localhost' },
          ],
          origins: [
            { origin: site.url, localStorage: [{ name: 'token', value: 'uploaded-token' }] },
            { origin: `http://localhost:${site.port}`, localStorage: [{ name: 'token', value: 'other-origin' }] },
          ],
        },
      },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ cookieCount: 1, originCount: 1 });
    const seen = cookiesSeen.length;
    const job = await capture({ url: `${account()}?uploaded`, profile: created.body.id, extract: ['text'] });
    const text = await textOf(job);
    expect(text).toContain(USER.name);
    expect(text).toContain('token: uploaded-token');
    const requests = cookiesSeen.slice(seen);
    expect(requests.map((r) => r.path)).toEqual(expect.arrayContaining(['/account', '/pixel']));
    for (const r of requests) expect(r.cookie).not.toContain('leak');
    await t.request('DELETE', `/v1/profiles/${created.body.id}`, { key });
  });

  it('profileCheck fails a capture whose marker is missing and sends profile.expired once until the profile is updated', async () => {
    const empty = await t.request('POST', '/v1/profiles', { key, body: { name: 'expired', allowedDomains: ['127.0.0.1'] } });
    expect(empty.status).toBe(201);
    expect(empty.body).toMatchObject({ cookieCount: 0, originCount: 0 });
    const id = empty.body.id;
    const events = async () =>
      (await db.query(`SELECT data FROM events WHERE account_id = $1 AND type = 'profile.expired' ORDER BY created_at`, [accountId])).map(
        (r: { data: unknown }) => r.data,
      );
    const body = { url: account(), profile: id, profileCheck: { selector: '#who' } };
    const first = await capture(body);
    expect(first.status).toBe('failed');
    expect(first.error).toBe('profile expired: #who not found');
    const second = await capture(body);
    expect(second.error).toBe('profile expired: #who not found');
    expect(await events()).toEqual([{ profileId: id, name: 'expired', screenshotId: first.id, url: account(), selector: '#who' }]);

    // Updated with a working state: the check passes; expired again later, the event fires again.
    const sid = [...sessions][0];
    const cookie = { name: 'sid', value: sid, domain: '127.0.0.1', path: '/' };
    expect((await t.request('PATCH', `/v1/profiles/${id}`, { key, body: { storageState: { cookies: [cookie] } } })).status).toBe(200);
    expect((await capture(body)).status).toBe('done');
    sessions.delete(sid);
    try {
      const third = await capture(body);
      expect(third.error).toBe('profile expired: #who not found');
      expect((await events()).map((e: any) => e.screenshotId)).toEqual([first.id, third.id]);
    } finally {
      sessions.add(sid);
    }
    for (const data of await events()) expect(JSON.stringify(data)).not.toContain(sid);
  });

  it("another account's profile is 404 everywhere; the plan limits profiles (free: 2)", async () => {
    const other = await t.createKey('free');
    expect((await t.request('GET', `/v1/profiles/${profileId}`, { key: other.key })).status).toBe(404);
    expect((await t.request('PATCH', `/v1/profiles/${profileId}`, { key: other.key, body: { name: 'x' } })).status).toBe(404);
    expect((await t.request('DELETE', `/v1/profiles/${profileId}`, { key: other.key })).status).toBe(404);
    const capture404 = await t.request('POST', '/v1/screenshot', { key: other.key, body: { url: account(), profile: profileId } });
    expect(capture404.status).toBe(404);
    expect(capture404.body.code).toBe('NOT_FOUND');
    const run404 = await t.request('POST', '/v1/runs', {
      key: other.key,
      body: { url: account(), video: false, saveProfile: { profileId } },
    });
    expect(run404.status).toBe(404);
    expect((await t.request('GET', '/v1/profiles', { key: other.key })).body).toEqual({ data: [], nextCursor: null });

    const make = (name: string) => t.request('POST', '/v1/profiles', { key: other.key, body: { name, allowedDomains: ['example.com'] } });
    expect((await make('one')).status).toBe(201);
    expect((await make('two')).status).toBe(201);
    const third = await make('three');
    expect(third.status).toBe(403);
    expect(third.body).toMatchObject({ code: 'PLAN_LIMIT_REACHED', details: { resource: 'profiles', limit: 2, plan: 'free' } });
    // A run that would create a third is refused at submission, nothing counted.
    const run = await t.request('POST', '/v1/runs', {
      key: other.key,
      body: { url: account(), video: false, saveProfile: { name: 'four', allowedDomains: ['127.0.0.1'] } },
    });
    expect(run.status).toBe(403);
    expect(run.body.code).toBe('PLAN_LIMIT_REACHED');
    const page = await t.request('GET', '/v1/profiles?limit=1', { key: other.key });
    expect(page.body.data.map((p: any) => p.name)).toEqual(['two']);
    const next = await t.request('GET', `/v1/profiles?limit=1&cursor=${page.body.nextCursor}`, { key: other.key });
    expect(next.body).toMatchObject({ data: [{ name: 'one' }], nextCursor: null });
  });

  it('validates the profile body: domains, the state shape, the 1 MiB cap', async () => {
    const bad = await t.request('POST', '/v1/profiles', {
      key,
      body: { name: 'bad', allowedDomains: ['Example.com'], storageState: { cookies: [{ name: 'a' }] } },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.details.fields.map((f: any) => f.field)).toEqual(expect.arrayContaining(['allowedDomains']));
    const shape = await t.request('POST', '/v1/profiles', {
      key,
      body: { name: 'bad', allowedDomains: ['example.com'], storageState: { cookies: [{ name: 'a' }] } },
    });
    expect(shape.status).toBe(400);
    expect(shape.body.details.fields[0].field).toMatch(/^storageState\.cookies\[0\]/);
    const big = 'x'.repeat(16_000);
    const cookies = Array.from({ length: 70 }, (_, i) => ({ name: `c${i}`, value: big, domain: 'example.com' }));
    const tooBig = await t.request('POST', '/v1/profiles', {
      key,
      body: { name: 'big', allowedDomains: ['example.com'], storageState: { cookies } },
    });
    expect(tooBig.status).toBe(413);
    const none = await t.request('POST', '/v1/profiles', { key, body: { name: 'none', allowedDomains: [] } });
    expect(none.status).toBe(400);
  });
});
