import { DataSource } from 'typeorm';
import { signedRenderLink } from '../../src/render/render-signature';
import { ScreenshotJob } from '../../src/screenshots/screenshot-job.entity';
import { CustomerMessage } from '../../src/results/customer-messages';
import { ScreenshotJobLifecycle } from '../../src/screenshots/screenshot-job-lifecycle';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * CONTRACT.md, "Tenancy: fair share and isolation" (docs/durability.md, "Fair share"): the queue class
 * of each kind of accepted work, the claim's order (round robin over accounts, class then age within
 * one), a redelivered entry's claim, ACCOUNT_MAX_RUNNING, and the Retry-After computed from the backlog
 * and the measured throughput (docs/errors-and-quotas.md). No processors: the test plays the queue's
 * part through the claim itself, so the order is exact.
 */
describe('fair share of capture work', () => {
  let t: TestApp;
  let db: DataSource;
  let claims: ScreenshotJobLifecycle;
  let entry = 0;
  /** A fresh queue entry id (the claim records it on the job). */
  const nextEntry = () => `scr_entry${++entry}`;
  const url = 'http://127.0.0.1:9/never-fetched';

  beforeAll(async () => {
    t = await startTestApp({ runProcessors: false, env: { MAX_PENDING_JOBS_PER_ACCOUNT: '3', RENDER_WAIT_MS: '0' } });
    db = t.get(DataSource);
    claims = t.get(ScreenshotJobLifecycle);
  });
  afterAll(() => t.close());
  // Each test starts without jobs (the open-work counter is emptied with them: TRUNCATE fires no trigger).
  beforeEach(() => db.query('TRUNCATE screenshot_jobs, account_turns, account_open_work CASCADE'));

  async function submit(key: string, headers: Record<string, string> = {}): Promise<string> {
    const res = await t.request('POST', '/v1/screenshot', { key, body: { url }, headers });
    expect(res.status).toBe(202);
    return res.body.id;
  }
  async function batch(key: string, n: number): Promise<string[]> {
    const res = await t.request('POST', '/v1/screenshot/batch', { key, body: { items: Array.from({ length: n }, () => ({ url })) } });
    expect(res.status).toBe(202);
    return res.body.data.map((job: { id: string }) => job.id);
  }
  async function renderMiss(key: string): Promise<Response> {
    const rk = (await t.request('POST', '/v1/render-keys', { key, body: {} })).body;
    return fetch(signedRenderLink(t.baseUrl, rk.id, rk.secret, 'png', { url: `${url}?${Math.random()}` }));
  }
  const classOf = async (id: string) => (await db.getRepository(ScreenshotJob).findOneByOrFail({ id })).queueClass;

  it('decides the class where the work is accepted: Prefer: wait and render-link misses interactive, plain standard, batches batch', async () => {
    const { key } = await t.createKey('pro');
    expect(await classOf(await submit(key, { Prefer: 'wait=1' }))).toBe(0);
    expect(await classOf(await submit(key))).toBe(1);
    const [item] = await batch(key, 1);
    expect(await classOf(item)).toBe(2);

    const other = await t.createKey('pro');
    const miss = await renderMiss(other.key);
    expect(miss.status).toBe(503);
    const [rendered] = await db.query('SELECT queue_class FROM screenshot_jobs WHERE account_id = $1', [other.accountId]);
    expect(rendered.queue_class).toBe(0);
  });

  it('claims take turns across the accounts with queued work, interactive first and then oldest first within one', async () => {
    const a = await t.createKey('pro');
    const b = await t.createKey('pro');
    const [a1, a2] = await batch(a.key, 2);
    const b1 = await submit(b.key);
    const b2 = await submit(b.key);
    const aWaits = await submit(a.key, { Prefer: 'wait=1' });

    const order: { id: string; accountId: string }[] = [];
    for (let i = 0; i < 5; i++) {
      const claimed = await claims.claimFair(nextEntry(), 0);
      expect(claimed.job).not.toBeNull();
      order.push({ id: claimed.job!.id, accountId: claimed.job!.accountId });
    }
    expect(await claims.claimFair(nextEntry(), 0)).toEqual({ job: null, capped: false });

    // Round robin: the accounts alternate while both have queued work (A's 3 jobs came in before B's).
    const accounts = order.map((o) => (o.accountId === a.accountId ? 'A' : 'B'));
    expect(accounts.slice(0, 4)).toEqual(accounts[0] === 'A' ? ['A', 'B', 'A', 'B'] : ['B', 'A', 'B', 'A']);
    expect(accounts[4]).toBe('A');
    // Within A: the waited-for capture first (accepted last), then the batch (its items accepted together); within B: oldest first.
    const aOrder = order.filter((o) => o.accountId === a.accountId).map((o) => o.id);
    expect(aOrder[0]).toBe(aWaits);
    expect(aOrder.slice(1).sort()).toEqual([a1, a2].sort());
    expect(order.filter((o) => o.accountId === b.accountId).map((o) => o.id)).toEqual([b1, b2]);
  });

  it('an account that arrives while another has a backlog is served at the next claim', async () => {
    const a = await t.createKey('pro');
    const b = await t.createKey('pro');
    await batch(a.key, 3);
    expect((await claims.claimFair(nextEntry(), 0)).job?.accountId).toBe(a.accountId);
    const b1 = await submit(b.key);
    expect((await claims.claimFair(nextEntry(), 0)).job?.id).toBe(b1);
  });

  it('a redelivered queue entry claims the job it had claimed again (one more attempt), not another', async () => {
    const { key } = await t.createKey('pro');
    await batch(key, 2);
    const entryId = nextEntry();
    const first = await claims.claimFair(entryId, 0);
    const again = await claims.claimFair(entryId, 0);
    expect(again.job?.id).toBe(first.job?.id);
    expect(again.job).toMatchObject({ status: 'processing', attempts: 2, claimedBy: entryId });
    const [{ pending }] = await db.query(`SELECT count(*)::int AS pending FROM screenshot_jobs WHERE status = 'pending'`);
    expect(pending).toBe(1);
  });

  it('ACCOUNT_MAX_RUNNING: concurrent claims never run more of one account at once; capped entries are told to wait', async () => {
    const c = await t.createKey('pro');
    const d = await t.createKey('pro');
    await batch(c.key, 3);
    const results = await Promise.all(Array.from({ length: 8 }, () => claims.claimFair(nextEntry(), 2)));
    expect(results.filter((r) => r.job).length).toBe(2);
    expect(results.filter((r) => !r.job).every((r) => !r.job && r.capped)).toBe(true);
    const running = async (accountId: string) =>
      (await db.query(`SELECT count(*)::int AS n FROM screenshot_jobs WHERE account_id = $1 AND status = 'processing'`, [accountId]))[0].n;
    expect(await running(c.accountId)).toBe(2);

    // Another account is not held up by C's cap.
    const d1 = await submit(d.key);
    expect((await claims.claimFair(nextEntry(), 2)).job?.id).toBe(d1);
    // Once one of C's jobs ends, C's next one is claimed.
    const ended = results.find((r) => r.job)!.job!;
    await claims.fail(ended.id, new CustomerMessage('ended for the test'));
    expect((await claims.claimFair(nextEntry(), 2)).job?.accountId).toBe(c.accountId);
    expect(await running(c.accountId)).toBe(2);
  });

  describe('Retry-After from the backlog ahead and the measured throughput', () => {
    async function refusedRetryAfter(key: string, n = 1): Promise<number> {
      const res =
        n === 1
          ? await t.request('POST', '/v1/screenshot', { key, body: { url } })
          : await t.request('POST', '/v1/screenshot/batch', { key, body: { items: Array.from({ length: n }, () => ({ url })) } });
      expect(res.status).toBe(429);
      expect(res.body.code).toBe('TOO_MANY_PENDING_JOBS');
      return Number(res.headers.get('retry-after'));
    }

    it('429 TOO_MANY_PENDING_JOBS and 503 RENDER_PENDING wait longer behind a longer backlog and shorter at a higher throughput', async () => {
      const x = await t.createKey('pro');
      await batch(x.key, 3);
      // Nothing ended in the last 60 s: the rate is its floor, one capture a minute; one job of X must end.
      const alone = await refusedRetryAfter(x.key);
      expect(alone).toBe(60);

      // Four other accounts with 3 queued each: one turn each before X's next job ends.
      const others = await Promise.all(Array.from({ length: 4 }, () => t.createKey('pro')));
      for (const other of others) await batch(other.key, 3);
      const behindOthers = await refusedRetryAfter(x.key);
      expect(behindOthers).toBe(300);
      // A batch of 3 needs 3 of X's jobs to end: 3 turns of every other account too.
      expect(await refusedRetryAfter(x.key, 3)).toBe(900);

      // Throughput measured: 6 captures of another account ended in the last minute, 1 s each.
      const z = await t.createKey('pro');
      for (let i = 0; i < 2; i++) {
        const ids = await batch(z.key, 3);
        await db.query(
          `UPDATE screenshot_jobs SET status = 'done', started_at = now() - interval '1 second', completed_at = now() WHERE id = ANY($1)`,
          [ids],
        );
      }
      const faster = await refusedRetryAfter(x.key);
      expect(faster).toBe(50); // 5 jobs ahead at 6 a minute
      expect(faster).toBeLessThan(behindOthers);

      // A render link's miss: its job is interactive (first in its account) behind one turn of 5 accounts.
      const w = await t.createKey('pro');
      const miss = await renderMiss(w.key);
      expect(miss.status).toBe(503);
      expect((await miss.json()).code).toBe('RENDER_PENDING');
      expect(Number(miss.headers.get('retry-after'))).toBe(60); // 6 ahead at 6 a minute
    });

    it('stays within 1 s and 3,600 s', async () => {
      const x = await t.createKey('pro');
      await batch(x.key, 3);
      const others = await Promise.all(Array.from({ length: 25 }, () => t.createKey('pro')));
      for (const other of others) await batch(other.key, 3);
      expect(await refusedRetryAfter(x.key, 3)).toBe(3600);
      // Every other account's jobs ended in the last minute, at once: X's next job is next, at 75 a minute: under 1 s, so 1 s.
      await db.query(
        `UPDATE screenshot_jobs SET status = 'done', started_at = now(), completed_at = now() WHERE status = 'pending' AND account_id <> $1`,
        [x.accountId],
      );
      expect(await refusedRetryAfter(x.key)).toBe(1);
    });
  });
});
