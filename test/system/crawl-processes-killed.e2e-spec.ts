import { Pool } from 'pg';
import { PageServer, startPageServer } from '../support/page-server';
import { ServiceProcess, waitFor } from '../support/outage';
import { useOutageHarness } from '../support/outage-scenario';

const PAGES = 24;
/** Each page answers this late, ms: the crawl lasts long enough to kill its driver twice. */
const PAGE_DELAY_MS = 400;

/**
 * A crawl survives its driver being killed (CONTRACT.md, "Crawls": "resumed after a worker or API
 * crash, never lost, never discovering a page twice"; docs/crawls.md, "Durability"): the API, which
 * drives it (`WORKER_MODE=inline`), is SIGKILLed mid-crawl, a worker process resumes it, that worker
 * is SIGKILLed in turn and a second worker finishes it. Every page is found once and captured by one
 * job, and the crawl ends `completed` with its bundle and one `crawl.completed` event.
 */
describe('crawls: the API and a worker killed mid-crawl', () => {
  const h = useOutageHarness();
  let site: PageServer;

  beforeAll(async () => {
    const routes: Record<string, string | ((req: any, res: any) => void)> = {};
    const slow = (html: string) => (_req: unknown, res: any) =>
      setTimeout(() => res.writeHead(200, { 'content-type': 'text/html' }).end(html), PAGE_DELAY_MS);
    const links = Array.from({ length: PAGES }, (_, i) => `<a href="/p/${i}">page ${i}</a>`).join(' ');
    routes['/'] = slow(`<html><head><title>Home</title></head><body>${links}</body></html>`);
    // Every page links to every other (and to itself, written another way): duplicates everywhere.
    for (let i = 0; i < PAGES; i++)
      routes[`/p/${i}`] = slow(
        `<html><head><title>P${i}</title></head><body>${links} <a href="/p/${i}#self">self</a> <a href="/">home</a></body></html>`,
      );
    site = await startPageServer(routes);
  });

  afterAll(async () => {
    await site?.close();
  });

  it('ends completed, each page found once and captured once, one event', async () => {
    const { env, key } = await h.setUp();
    const base = { ...env, CAPTURE_CONCURRENCY: '2' };
    const api = await h.start('main', { ...base, WORKER_MODE: 'inline' });
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const created = await fetch(`${api.baseUrl}/v1/crawls`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ url: `${site.url}/`, discover: 'links', maxDepth: 2, capture: { width: 320, height: 240 } }),
    });
    expect(created.status).toBe(202);
    const { id } = (await created.json()) as { id: string };
    const crawlOf = async (service: ServiceProcess) =>
      (await (await fetch(`${service.baseUrl}/v1/crawls/${id}`, { headers })).json()) as Record<string, any>;
    const fail = (err: Error) => {
      throw new Error(`${err.message}\n${h.logs()}`);
    };

    await waitFor('a few pages done under the API', async () => (await crawlOf(api)).pagesDone >= 3, 60_000, 100).catch(fail);
    await api.kill('SIGKILL');
    const reader = await h.start('main', { ...base, WORKER_MODE: 'off' });
    const first = await h.start('worker', base);
    const doneBefore = (await crawlOf(reader)).pagesDone;
    await waitFor('the worker resumes the crawl', async () => (await crawlOf(reader)).pagesDone >= doneBefore + 3, 120_000, 200).catch(
      fail,
    );
    await first.kill('SIGKILL');
    await h.start('worker', base);
    await waitFor('the crawl to end', async () => !['pending', 'running'].includes((await crawlOf(reader)).status), 180_000, 250).catch(
      fail,
    );

    const crawl = await crawlOf(reader);
    expect(crawl).toMatchObject({ status: 'completed', stoppedReason: 'exhausted', pagesFound: PAGES + 1, pagesQueued: PAGES + 1 });
    expect(crawl.pagesDone + crawl.pagesFailed).toBe(PAGES + 1);
    const pg = new Pool({ connectionString: env.DATABASE_URL, max: 1 });
    try {
      const jobs = (
        await pg.query(`SELECT target_url, count(*)::int AS n FROM screenshot_jobs WHERE crawl_id = $1 GROUP BY target_url`, [id])
      ).rows;
      expect(jobs).toHaveLength(PAGES + 1);
      expect(jobs.filter((j: { n: number }) => j.n !== 1)).toEqual([]);
      const events = (await pg.query(`SELECT type FROM events WHERE data->>'crawlId' = $1`, [id])).rows;
      expect(events).toEqual([{ type: 'crawl.completed' }]);
    } finally {
      await pg.end();
    }
    const bundle = await fetch(crawl.bundleUrl.replace(/^https?:\/\/[^/]+/, reader.baseUrl!));
    expect(bundle.status).toBe(200);
  }, 480_000);
});
