import { BrowserPool, LEASE_END_SETTLE_MS } from '../../src/browser/browser-pool';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * The pool's warm contexts (docs/capture-engine.md#isolation: CAPTURE_WARM_CONTEXTS): a lease takes a context
 * created ahead of it, and the pool is topped up a moment after the lease ends, not while the lease
 * navigates nor while its caller completes the job (starting a renderer then competes with them for
 * the CPU: the idle latency of `npm run bench`).
 */
describe('browser pool: warm contexts', () => {
  let t: TestApp;
  let pool: BrowserPool;

  beforeAll(async () => {
    t = await startTestApp({ runProcessors: false, env: { CAPTURE_WARM_CONTEXTS: '2' } });
    pool = t.get(BrowserPool);
  });
  afterAll(() => t.close());

  /** The browser's open contexts, counted inside a lease after `settleMs` (time for any creation under way to finish). */
  const contextsDuringLease = (settleMs: number) =>
    pool.withLease({ budgetMs: 30_000 }, async (lease) => {
      await new Promise((r) => setTimeout(r, settleMs));
      return { count: lease.context.browser()!.contexts().length, context: lease.context };
    });

  it('creates no context while a lease runs with a warm one left, and tops the pool up once it ends', async () => {
    await pool.withLease({ budgetMs: 30_000 }, async () => undefined); // launches the browser and its warm pool
    await new Promise((r) => setTimeout(r, 1_000));
    const first = await contextsDuringLease(500);
    // The leased context and the one warm context left; none created beside the lease.
    expect(first.count).toBe(2);
    await new Promise((r) => setTimeout(r, 1_000));
    const second = await contextsDuringLease(500);
    // Topped up after the first lease: again the leased one plus one warm, and a new context each time.
    expect(second.count).toBe(2);
    expect(second.context).not.toBe(first.context);
    expect(first.context.pages().length).toBe(0); // closed after its lease
  });

  it('leaves the CPU to the caller right after a lease that ran alone: the context is closed and the pool topped up a moment later', async () => {
    await new Promise((r) => setTimeout(r, 1_000));
    let closeCalled = false;
    const leased = await pool.withLease({ budgetMs: 30_000 }, async (lease) => {
      const close = lease.context.close.bind(lease.context);
      lease.context.close = (...args) => ((closeCalled = true), close(...args));
      return lease.context;
    });
    // What the caller does right after its lease (storing the file, completing the job) runs before the
    // context is torn down.
    expect(closeCalled).toBe(false);
    expect(leased.pages().length).toBe(1);
    await new Promise((r) => setTimeout(r, LEASE_END_SETTLE_MS + 1_000));
    expect(closeCalled).toBe(true);
    expect(leased.pages().length).toBe(0);
    expect(leased.browser()!.contexts().length).toBe(2); // the warm pool, full again
  });
});
