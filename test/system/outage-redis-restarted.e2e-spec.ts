import { post, useOutageHarness } from '../support/outage-scenario';
import { sleep, waitFor } from '../support/outage';

/**
 * An outage reproduced against real processes: Redis restarted empty under a backlog (docs/durability.md). Every accepted job ends,
 * the quota counts each once, no job twice. The figures are printed.
 */
describe('outage: Redis restarted empty under a backlog', () => {
  const h = useOutageHarness();

  it('Redis restarted empty under a backlog: queued jobs and the repeatable sweeps come back', async () => {
    const { env, db, key, keyId } = await h.setUp();
    const api = await h.start('main', { ...env, WORKER_MODE: 'off' });
    await h.start('worker', env);
    const repeatKeys = () => h.redis.cli('--scan', '--pattern', `${env.QUEUE_PREFIX}:*:repeat`).trim().split('\n').filter(Boolean);
    await waitFor('the repeatable sweeps to be registered', async () => repeatKeys().length >= 3, 20_000);
    // A backlog: 1 s per capture, 3 at once, so most jobs still wait in the queue when Redis restarts.
    const JOBS = 30;
    const answers = await Promise.all(Array.from({ length: JOBS }, () => post(api.baseUrl!, key, { ...h.page(), delay: 1000 })));
    expect(answers.every((a) => a.status === 202)).toBe(true);
    await sleep(2_000);
    const pendingAtRestart = (await db.jobs(keyId)).filter((j) => j.status === 'pending').length;
    await h.redis.kill();
    await h.redis.startServer();
    const restartedAt = Date.now();
    const ended = await db.allEnded(keyId, 120_000, () => h.logs());
    const repeatables = await waitFor(
      'the repeatable sweeps to be registered again',
      async () => repeatKeys().length >= 3 && repeatKeys(),
      40_000,
    );
    const jobs = await db.jobs(keyId);
    const used = await db.used(keyId);
    console.log(
      `outage (Redis restarted empty, ${pendingAtRestart} of ${JOBS} jobs waiting in the queue): ${jobs.length} job rows, quota ${used}, ` +
        `${jobs.filter((j) => j.status === 'done').length} done, ${jobs.filter((j) => j.status === 'failed').length} failed, ` +
        `duplicates ${answers.length - new Set(answers.map((a) => a.body.id)).size}; all ended ${ended} ms after Redis came back; ` +
        `repeatable jobs registered again: ${repeatables
          .map((k) => k.split(':').slice(-2, -1)[0])
          .sort()
          .join(', ')} (${Date.now() - restartedAt} ms)`,
    );
    expect(pendingAtRestart).toBeGreaterThan(0);
    expect(jobs).toHaveLength(JOBS);
    expect(used).toBe(JOBS);
    expect(jobs.every((j) => j.status === 'done')).toBe(true);
    await db.close();
  }, 240_000);
});
