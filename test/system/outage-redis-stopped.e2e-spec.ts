import { DEPENDENCY_TIMEOUT_MS, percentile, post, useOutageHarness } from '../support/outage-scenario';
import { sleep } from '../support/outage';

/**
 * An outage reproduced against real processes: Redis stopped (docs/durability.md). Every accepted job ends,
 * the quota counts each once, no job twice. The figures are printed.
 */
describe('outage: Redis stopped', () => {
  const h = useOutageHarness();

  it('Redis stopped: POSTs answer 202 within DEPENDENCY_TIMEOUT_MS, an instance started meanwhile serves, jobs run when Redis is back', async () => {
    const { env, db, key, keyId } = await h.setUp();
    const api = await h.start('main', { ...env, WORKER_MODE: 'off' });
    await h.redis.kill();
    const stoppedAt = Date.now();
    const before = await Promise.all(Array.from({ length: 10 }, () => post(api.baseUrl!, key, h.page())));
    // A complete service (API and processors) started while Redis is away starts and serves.
    const inline = await h.start('main', { ...env, WORKER_MODE: 'inline' });
    const startedMs = Date.now() - stoppedAt;
    const during = await Promise.all(Array.from({ length: 10 }, () => post(inline.baseUrl!, key, h.page())));
    const answers = [...before, ...during];
    await sleep(2_000);
    expect((await db.jobs(keyId)).every((j) => j.status === 'pending')).toBe(true);
    await h.redis.startServer();
    const backAt = Date.now();
    const ended = await db.allEnded(keyId, 120_000, () => h.logs());
    const jobs = await db.jobs(keyId);
    const used = await db.used(keyId);
    const latencies = answers.map((a) => a.ms);
    console.log(
      `outage (Redis stopped): ${answers.length} POSTs, ${answers.filter((a) => a.status === 202).length} × 202, ` +
        `p50 ${percentile(latencies, 50)} ms, max ${Math.max(...latencies)} ms; an inline instance started without Redis served after ${startedMs} ms; ` +
        `${jobs.length} job rows, quota ${used}, duplicates ${answers.length - new Set(answers.map((a) => a.body.id)).size}; ` +
        `all ${jobs.filter((j) => j.status === 'done').length} done ${ended} ms after Redis came back (${Date.now() - backAt} ms)`,
    );
    expect(answers.every((a) => a.status === 202)).toBe(true);
    expect(Math.max(...latencies)).toBeLessThan(DEPENDENCY_TIMEOUT_MS);
    expect(jobs).toHaveLength(answers.length);
    expect(used).toBe(answers.length);
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(answers.length);
    expect(jobs.every((j) => j.status === 'done')).toBe(true);
    await db.close();
  }, 240_000);
});
