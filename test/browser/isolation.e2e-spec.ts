import type { IncomingMessage, ServerResponse } from 'node:http';
import { PageServer, startPageServer } from '../support/page-server';
import { startTestApp, TestApp, waitForJob } from '../support/test-app';

/**
 * One capture never sees another's state. A writer page stores every kind of state the browser
 * keeps per profile; reader pages in later jobs (same account, other account) report what they
 * find. Each page holds its `load` event (an image the server answers only after the page's
 * report arrived), so the report is in before the capture ends, without sleeping.
 */
describe('capture isolation', () => {
  let t: TestApp;
  let pages: PageServer;
  const reports = new Map<string, any>();
  const waiting = new Map<string, () => void>();
  const readCookies: (string | undefined)[] = [];
  let cacheableHits = 0;

  const GIF = Buffer.from('R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64');

  function report(req: IncomingMessage, res: ServerResponse): void {
    const role = new URL(req.url ?? '', 'http://x').searchParams.get('role') as string;
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      reports.set(role, JSON.parse(body));
      waiting.get(role)?.();
      res.writeHead(204).end();
    });
  }

  /** Answers when the page's report arrived (or after 15 s), so the page's load waits for it. */
  function hold(req: IncomingMessage, res: ServerResponse): void {
    const role = new URL(req.url ?? '', 'http://x').searchParams.get('role') as string;
    const answer = () => {
      clearTimeout(timer);
      waiting.delete(role);
      if (!res.headersSent) res.writeHead(200, { 'content-type': 'image/gif', 'cache-control': 'no-store' }).end(GIF);
    };
    const timer = setTimeout(answer, 15_000);
    if (reports.has(role)) answer();
    else waiting.set(role, answer);
  }

  const writer = `<!doctype html><html><body><h1>writer</h1>
    <script src="/cacheable.js"></script>
    <script>
      const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
      const attempt = async (f) => { try { await f(); return true; } catch (e) { return String(e); } };
      (async () => {
        const out = { cacheableValue: window.cacheableValue };
        out.cookie = await attempt(() => { document.cookie = 'jsCookie=1; max-age=3600; path=/'; if (!document.cookie.includes('jsCookie')) throw new Error('not set'); });
        out.localStorage = await attempt(() => localStorage.setItem('secret', 'from-writer'));
        out.sessionStorage = await attempt(() => sessionStorage.setItem('secret', 'from-writer'));
        out.indexedDB = await attempt(() => new Promise((resolve, reject) => {
          const open = indexedDB.open('secret-db', 1);
          open.onupgradeneeded = () => open.result.createObjectStore('s');
          open.onerror = () => reject(open.error);
          open.onsuccess = () => {
            const tx = open.result.transaction('s', 'readwrite');
            tx.objectStore('s').put('from-writer', 'k');
            tx.oncomplete = () => { open.result.close(); resolve(); };
            tx.onerror = () => reject(tx.error);
          };
        }));
        out.cacheStorage = await attempt(async () => (await caches.open('secret-cache')).put('/entry', new Response('from-writer')));
        out.serviceWorker = await attempt(() => Promise.race([navigator.serviceWorker.register('/sw.js'), sleep(1000).then(() => { throw new Error('timeout'); })]));
        out.notification = await attempt(() => Promise.race([Notification.requestPermission(), sleep(500)]));
        await fetch('/report?role=writer', { method: 'POST', body: JSON.stringify(out) });
      })();
    </script>
    <img src="/hold?role=writer"></body></html>`;

  const reader = (role: string) => `<!doctype html><html><body><h1>reader</h1>
    <script src="/cacheable.js"></script>
    <script>
      (async () => {
        const out = { cacheableValue: window.cacheableValue, cookie: document.cookie };
        out.localStorage = Object.keys(localStorage);
        out.sessionStorage = Object.keys(sessionStorage);
        out.indexedDB = (await indexedDB.databases()).map((d) => d.name);
        out.cacheStorage = await caches.keys();
        out.serviceWorkers = navigator.serviceWorker ? (await navigator.serviceWorker.getRegistrations()).length : 'n/a';
        out.permissions = {};
        for (const name of ['geolocation', 'notifications', 'camera', 'microphone', 'midi']) {
          try { out.permissions[name] = (await navigator.permissions.query({ name })).state; } catch (e) { out.permissions[name] = 'n/a'; }
        }
        await fetch('/report?role=${role}', { method: 'POST', body: JSON.stringify(out) });
      })();
    </script>
    <img src="/hold?role=${role}"></body></html>`;

  beforeAll(async () => {
    pages = await startPageServer({
      '/write': (_req, res) =>
        res.writeHead(200, { 'content-type': 'text/html', 'set-cookie': 'httpCookie=1; Max-Age=3600; Path=/' }).end(writer),
      '/read': (req, res) => {
        readCookies.push(req.headers.cookie);
        const role = new URL(req.url ?? '', 'http://x').searchParams.get('role') as string;
        res.writeHead(200, { 'content-type': 'text/html' }).end(reader(role));
      },
      '/cacheable.js': (_req, res) =>
        res
          .writeHead(200, { 'content-type': 'text/javascript', 'cache-control': 'public, max-age=3600' })
          .end(`window.cacheableValue = ${++cacheableHits};`),
      '/sw.js': (_req, res) => res.writeHead(200, { 'content-type': 'text/javascript' }).end('self.addEventListener("fetch", () => {});'),
      '/report': report,
      '/hold': hold,
    });
    t = await startTestApp();
  });

  afterAll(async () => {
    await t.close();
    await pages.close();
  });

  async function run(key: string, path: string, role: string): Promise<any> {
    reports.delete(role);
    const res = await t.request('POST', '/v1/screenshot', { key, body: { url: `${pages.url}${path}`, width: 400, height: 300 } });
    expect(res.status).toBe(202);
    const job = await waitForJob(t, key, res.body.id);
    expect(job.status).toBe('done');
    expect(reports.has(role)).toBe(true);
    return reports.get(role);
  }

  it('a page that writes every kind of state leaves nothing for the next capture, same account or another', async () => {
    const a = await t.createKey();
    const b = await t.createKey();
    const baseline = await run(a.key, '/read?role=baseline', 'baseline');

    const written = await run(a.key, '/write', 'writer');
    expect(written).toMatchObject({ cookie: true, localStorage: true, sessionStorage: true, indexedDB: true, cacheStorage: true });

    const sameAccount = await run(a.key, '/read?role=same', 'same');
    const otherAccount = await run(b.key, '/read?role=other', 'other');
    for (const found of [sameAccount, otherAccount]) {
      expect(found).toMatchObject({ cookie: '', localStorage: [], sessionStorage: [], indexedDB: [], cacheStorage: [], serviceWorkers: 0 });
      expect(found.permissions).toEqual(baseline.permissions);
      // The HTTP cache is not shared either: the cacheable script was fetched again each time.
      expect(found.cacheableValue).not.toBe(written.cacheableValue);
    }
    expect(readCookies).toEqual([undefined, undefined, undefined]);
    expect(cacheableHits).toBe(4);
  });
});
