import { getQueueToken } from '@nestjs/bull';
import type { Queue } from 'bull';
import { DataSource } from 'typeorm';
import { RUN_QUEUE } from '../../src/queue/queues';
import { RunProcessor, RunTurnGiven } from '../../src/runs/run.processor';
import { MAX_RUN_YIELDS } from '../../src/runs/run-work';
import { PageServer } from '../support/page-server';
import { startRunPages } from '../support/run-pages';
import { waitForRun } from '../support/runs';
import { startTestApp, TestApp } from '../support/test-app';

const SECRET = 'fair-turn-secret-7781';

/**
 * CONTRACT.md, "Tenancy: fair share and isolation" (docs/durability.md, "Fair share"; docs/runs.md):
 * runs take their turn across accounts. One worker, RUN_CONCURRENCY 1; the worker's queue is paused
 * while both accounts queue, so the order in which the entries are taken is the queue's, and the
 * assertions are on the order the runs started (`started_at`), never on time.
 */
describe('fair share of browser session runs', () => {
  let t: TestApp;
  let pages: PageServer;
  let queue: Queue;

  beforeAll(async () => {
    pages = await startRunPages();
    t = await startTestApp({ env: { RUN_CONCURRENCY: '1' } });
    queue = t.get<Queue>(getQueueToken(RUN_QUEUE));
  });
  afterAll(async () => {
    await t?.close();
    await pages?.close();
  });

  async function start(key: string, steps: unknown[]): Promise<string> {
    const res = await t.request('POST', '/v1/runs', { key, body: { url: `${pages.url}/login`, steps } });
    expect(res.status).toBe(202);
    return res.body.id;
  }

  it("an account's backlog does not hold back another account's run, and each run keeps its own sensitive values", async () => {
    const a = await t.createKey('pro');
    const b = await t.createKey('pro');
    const simple = [{ action: 'waitForSelector', selector: '#user' }];
    // A's second queued run types a sensitive value and checks, in the page, that it arrived.
    const login = [
      { action: 'fill', selector: '#password', value: SECRET, sensitive: true },
      { action: 'click', selector: '#submit' },
      { action: 'waitForUrl', url: '**/welcome?*' },
      { action: 'evaluate', script: `new URLSearchParams(location.search).get('password') === ${JSON.stringify(SECRET)}` },
    ];

    // A has had a run already, so its turn is recorded (B never had one).
    expect((await waitForRun(t, a.key, await start(a.key, simple))).status).toBe('completed');

    await queue.pause(true);
    const aRuns = [await start(a.key, simple), await start(a.key, login), await start(a.key, simple), await start(a.key, simple)];
    const bRun = await start(b.key, simple);
    // Every entry is queued (the requests add them before answering) before the worker takes any.
    expect(await queue.getWaitingCount()).toBe(5);
    await queue.resume(true);

    const ended = await Promise.all([...aRuns, bRun].map((id, i) => waitForRun(t, i < 4 ? a.key : b.key, id, 120_000)));
    expect(ended.map((r) => r.status)).toEqual(['completed', 'completed', 'completed', 'completed', 'completed']);
    // The sensitive value reached the run that owns it, though its entry gave its turn.
    expect(ended[1].steps.map((s: { status: string }) => s.status)).toEqual(['ok', 'ok', 'ok', 'ok']);
    expect(ended[1].steps[3].result).toBe(true);

    const rows: { id: string }[] = await t
      .get(DataSource)
      .query('SELECT id FROM runs WHERE id = ANY($1) ORDER BY started_at', [[...aRuns, bRun]]);
    const order = rows.map((r) => (r.id === bRun ? 'B' : `A${aRuns.indexOf(r.id) + 1}`));
    // B's run, queued last, starts first: every entry of A taken before it gives its turn while B has a run queued.
    expect(order[0]).toBe('B');
    expect(order.slice(1).sort()).toEqual(['A1', 'A2', 'A3', 'A4']);
    // Giving a turn is not a claim: every run was claimed once.
    const attempts: { attempts: number }[] = await t
      .get(DataSource)
      .query('SELECT attempts FROM runs WHERE id = ANY($1)', [[...aRuns, bRun]]);
    expect(attempts.map((r) => r.attempts)).toEqual([1, 1, 1, 1, 1]);
    // Six runs one after another on one worker: more than 60 s on a 2-core machine busy with the suite.
  }, 180_000);

  it('an entry gives its turn at most MAX_RUN_YIELDS times, then claims its own run anyway', async () => {
    const a = await t.createKey('pro');
    const b = await t.createKey('pro');
    const db = t.get(DataSource);
    await queue.pause(true);
    try {
      const aRun = await start(a.key, [{ action: 'waitForSelector', selector: '#user' }]);
      const bRun = await start(b.key, [{ action: 'waitForSelector', selector: '#user' }]);
      // A was served; B, never served, has a run pending: A's entry should give its turn.
      await db.query('INSERT INTO run_turns (account_id, served_at) VALUES ($1, now())', [a.accountId]);
      const handle = (attemptsMade: number) => {
        const job = { data: { runId: aRun }, attemptsMade, opts: { attempts: MAX_RUN_YIELDS + 1 }, discard: jest.fn() };
        return (t.get(RunProcessor) as unknown as { handle(j: unknown): Promise<void> }).handle(job);
      };
      const status = async (id: string) => (await db.query('SELECT status FROM runs WHERE id = $1', [id]))[0].status;

      await expect(handle(MAX_RUN_YIELDS - 1)).rejects.toBeInstanceOf(RunTurnGiven);
      expect(await status(aRun)).toBe('pending');
      await handle(MAX_RUN_YIELDS);
      expect(await status(aRun)).toBe('completed');
      expect(await status(bRun)).toBe('pending');
    } finally {
      await queue.resume(true);
    }
  });
});
