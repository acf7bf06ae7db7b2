import { Answer, DEPENDENCY_TIMEOUT_MS, post, useOutageHarness } from '../support/outage-scenario';
import { sleep } from '../support/outage';

/**
 * An outage reproduced against real processes: PostgreSQL stopped under load (docs/durability.md). Every accepted job ends,
 * the quota counts each once, no job twice. The figures are printed.
 */
describe('outage: PostgreSQL stopped under load', () => {
  const h = useOutageHarness();

  it('PostgreSQL stopped under load: 503 SERVICE_UNAVAILABLE within the bound, nothing stranded', async () => {
    const { env, db, key, keyId } = await h.setUp();
    const api = await h.start('main', { ...env, WORKER_MODE: 'off' });
    await h.start('worker', env);
    const OUTAGE_MS = 8_000;

    const answers: Answer[] = [];
    let running = true;
    // About 4 POSTs per second, before, during and after the outage.
    const load = (async () => {
      const inFlight: Promise<void>[] = [];
      while (running) {
        inFlight.push(post(api.baseUrl!, key, h.page()).then((a) => void answers.push(a)));
        await sleep(250);
      }
      await Promise.all(inFlight);
    })();
    await sleep(3_000);
    h.pg.stop();
    const stoppedAt = Date.now();
    await sleep(OUTAGE_MS);
    await h.pg.startServer();
    const restartedAt = Date.now();
    await sleep(3_000);
    running = false;
    await load;

    const accepted = answers.filter((a) => a.status === 202);
    const unavailable = answers.filter((a) => a.status === 503);
    const ended = await db.allEnded(keyId, 120_000, () => h.logs());
    const jobs = await db.jobs(keyId);
    const used = await db.used(keyId);
    console.log(
      `outage (PostgreSQL stopped ${((restartedAt - stoppedAt) / 1000).toFixed(1)} s under ~4 POST/s): ${answers.length} POSTs, ` +
        `${accepted.length} accepted, ${unavailable.length} × 503 (max ${Math.max(0, ...unavailable.map((a) => a.ms))} ms), ` +
        `other ${answers.length - accepted.length - unavailable.length}; ${jobs.length} job rows, quota ${used}; ` +
        `${jobs.filter((j) => j.status === 'done').length} done, ${jobs.filter((j) => j.status === 'failed').length} failed; ` +
        `duplicates ${accepted.length - new Set(accepted.map((a) => a.body.id)).size}; all ended ${ended} ms after PostgreSQL was back`,
    );
    expect(unavailable.length).toBeGreaterThan(0);
    for (const a of unavailable) {
      expect(a.body).toMatchObject({ code: 'SERVICE_UNAVAILABLE', requestId: expect.any(String) });
      expect(Number(a.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(a.ms).toBeLessThan(DEPENDENCY_TIMEOUT_MS + 1000);
    }
    expect(answers.every((a) => a.status === 202 || a.status === 503)).toBe(true);
    expect(new Set(accepted.map((a) => a.body.id)).size).toBe(accepted.length);
    // Every accepted job exists; a row exists only for an accepted job (a 503 accepted nothing) and counts once.
    expect(jobs.map((j) => j.id).sort()).toEqual(accepted.map((a) => a.body.id).sort());
    expect(used).toBe(jobs.length);
    expect(jobs.every((j) => j.status === 'done')).toBe(true);
    await db.close();
  }, 240_000);
});
