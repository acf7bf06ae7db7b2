import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { DataSource } from 'typeorm';
import { waitFor } from '../support/outage';
import { PageServer, startPageServer } from '../support/page-server';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * CONTRACT.md, "Tenancy: fair share and isolation", through the real queue, workers and Chromium: an
 * account's backlog never queues another account's capture (or its own interactive one) behind it,
 * ACCOUNT_MAX_RUNNING holds, and each worker exports `glimpse_worker_slots`. Orders are read from the
 * rows (`started_at`, `completed_at`), never from wall time.
 */

/** A page that answers after `ms` (so a capture takes a while and a backlog forms). */
function slowPage(ms: number) {
  return (_req: unknown, res: { writeHead(s: number, h: Record<string, string>): { end(b: string): void } }) =>
    setTimeout(() => res.writeHead(200, { 'content-type': 'text/html' }).end('<h1>slow</h1>'), ms);
}

interface Row {
  id: string;
  account_id: string;
  status: string;
  started_at: Date | null;
  completed_at: Date | null;
}

async function rowsOf(db: DataSource, accountIds: string[]): Promise<Row[]> {
  return db.query('SELECT id, account_id, status, started_at, completed_at FROM screenshot_jobs WHERE account_id = ANY($1)', [accountIds]);
}

async function allEnded(db: DataSource, accountIds: string[], count: number): Promise<Row[]> {
  return waitFor(
    'every job to end',
    async () => {
      const rows = await rowsOf(db, accountIds);
      return rows.length === count && rows.every((r) => r.status === 'done' || r.status === 'failed') ? rows : null;
    },
    90_000,
    100,
  );
}

/** Jobs of `rows` that started after `job` did. */
const startedAfter = (rows: Row[], job: Row) => rows.filter((r) => r.started_at!.getTime() > job.started_at!.getTime()).length;

describe('fair share: one capture slot, one account with a backlog', () => {
  let t: TestApp;
  let pages: PageServer;
  let db: DataSource;

  beforeAll(async () => {
    pages = await startPageServer({ '/slow': slowPage(300) });
    t = await startTestApp({ env: { CAPTURE_CONCURRENCY: '1' } });
    db = t.get(DataSource);
  });
  afterAll(async () => {
    await t.close();
    await pages.close();
  });

  async function slots(): Promise<{ busy: number; free: number }> {
    const families = parsePrometheusTextFormat(await (await fetch(`${t.baseUrl}/metrics`)).text());
    const family = families.find((f) => f.name === 'glimpse_worker_slots');
    const of = (state: string) => Number(family?.metrics.find((m) => m.labels?.state === state)?.value ?? NaN);
    return { busy: of('busy'), free: of('free') };
  }

  it("another account's capture starts before the rest of the backlog; the gauge shows the slot busy, then free", async () => {
    expect(await slots()).toEqual({ busy: 0, free: 1 });
    const a = await t.createKey('pro');
    const b = await t.createKey('pro');
    const n = 10;
    const batch = await t.request('POST', '/v1/screenshot/batch', {
      key: a.key,
      body: { items: Array.from({ length: n }, () => ({ url: `${pages.url}/slow` })) },
    });
    expect(batch.status).toBe(202);
    const submitted = await t.request('POST', '/v1/screenshot', { key: b.key, body: { url: `${pages.url}/slow` } });
    expect(submitted.status).toBe(202);
    // A's jobs that had left the queue by the time B's was accepted (read after it: at least those).
    const gone = (await rowsOf(db, [a.accountId])).filter((r) => r.status !== 'pending').length;
    await waitFor('the capture slot to be busy', async () => (await slots()).busy === 1, 20_000, 50);

    const rows = await allEnded(db, [a.accountId, b.accountId], n + 1);
    const bJob = rows.find((r) => r.id === submitted.body.id)!;
    const aRows = rows.filter((r) => r.account_id === a.accountId);
    // B's job waits for at most the jobs already claimed when it arrived (2 × CAPTURE_CONCURRENCY in flight), never for A's backlog.
    expect(gone).toBeLessThan(n - 2);
    expect(startedAfter(aRows, bJob)).toBeGreaterThanOrEqual(n - gone - 2);
    expect(await slots()).toEqual({ busy: 0, free: 1 });
  });

  it("an account's interactive capture (Prefer: wait) starts before its own batch backlog", async () => {
    const a = await t.createKey('pro');
    const n = 8;
    const batch = await t.request('POST', '/v1/screenshot/batch', {
      key: a.key,
      body: { items: Array.from({ length: n }, () => ({ url: `${pages.url}/slow` })) },
    });
    expect(batch.status).toBe(202);
    const waited = t.request('POST', '/v1/screenshot', { key: a.key, body: { url: `${pages.url}/slow` }, headers: { Prefer: 'wait=60' } });
    const interactiveId = await waitFor(
      'the interactive job to be accepted',
      async () => (await db.query(`SELECT id FROM screenshot_jobs WHERE account_id = $1 AND queue_class = 0`, [a.accountId]))[0]?.id,
      20_000,
      20,
    );
    const gone = (await rowsOf(db, [a.accountId])).filter((r) => r.status !== 'pending' && r.id !== interactiveId).length;
    expect((await waited).status).toBe(200);

    const rows = await allEnded(db, [a.accountId], n + 1);
    const interactive = rows.find((r) => r.id === interactiveId)!;
    expect(gone).toBeLessThan(n - 2);
    expect(startedAfter(rows, interactive)).toBeGreaterThanOrEqual(n - gone - 2);
  });
});

describe('fair share: ACCOUNT_MAX_RUNNING', () => {
  let t: TestApp;
  let pages: PageServer;
  let db: DataSource;

  beforeAll(async () => {
    pages = await startPageServer({ '/slow': slowPage(200) });
    // Four jobs in flight per worker (2 × CAPTURE_CONCURRENCY), at most one of them per account.
    t = await startTestApp({ env: { CAPTURE_CONCURRENCY: '2', ACCOUNT_MAX_RUNNING: '1' } });
    db = t.get(DataSource);
  });
  afterAll(async () => {
    await t.close();
    await pages.close();
  });

  it('never runs more of one account at once than the cap, and other accounts still get their turn', async () => {
    const a = await t.createKey('pro');
    const b = await t.createKey('pro');
    const n = 5;
    const batch = await t.request('POST', '/v1/screenshot/batch', {
      key: a.key,
      body: { items: Array.from({ length: n }, () => ({ url: `${pages.url}/slow` })) },
    });
    expect(batch.status).toBe(202);
    const bJob = await t.request('POST', '/v1/screenshot', { key: b.key, body: { url: `${pages.url}/slow` } });
    expect(bJob.status).toBe(202);

    const rows = await allEnded(db, [a.accountId, b.accountId], n + 1);
    expect(rows.every((r) => r.status === 'done')).toBe(true);
    // Most of A's jobs processing at once, from each job's claim (started_at) to its end (completed_at).
    const aRows = rows.filter((r) => r.account_id === a.accountId);
    const events = aRows.flatMap((r) => [
      { at: r.started_at!.getTime(), step: 1 },
      { at: r.completed_at!.getTime(), step: -1 },
    ]);
    events.sort((x, y) => x.at - y.at || x.step - y.step);
    let running = 0;
    let most = 0;
    for (const e of events) most = Math.max(most, (running += e.step));
    expect(most).toBe(1);
    // B was not held behind A's capped backlog.
    expect(
      startedAfter(
        aRows,
        rows.find((r) => r.id === bJob.body.id)!,
      ),
    ).toBeGreaterThanOrEqual(n - 2);
  });
});
