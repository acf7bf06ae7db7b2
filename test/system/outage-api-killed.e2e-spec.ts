import { Answer, post, useOutageHarness } from '../support/outage-scenario';

/**
 * An outage reproduced against real processes: the API SIGKILLed mid-burst (docs/durability.md). Every accepted job ends,
 * the quota counts each once, no job twice. The figures are printed.
 */
/** Calls `run` for each of `items`, at most `lanes` at once. */
async function inLanes<T>(items: T[], lanes: number, run: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (next < items.length) await run(items[next++]);
    }),
  );
}

describe('outage: the API SIGKILLed mid-burst', () => {
  const h = useOutageHarness();

  it('the API SIGKILLed mid-burst, every Idempotency-Key replayed: one job and one count per key', async () => {
    const { env, db, key, keyId } = await h.setUp();
    await h.start('worker', env);
    let api = await h.start('main', { ...env, WORKER_MODE: 'off' });
    const KEYS = 50;
    const CONCURRENCY = 16;
    const keys = Array.from({ length: KEYS }, (_, i) => `outage-burst-${h.scenario}-${i.toString().padStart(4, '0')}`);
    const first = new Map<string, Answer>();

    let next = 0;
    let killed = false;
    const killAfter = KEYS / 2;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < KEYS && !killed) {
          const idem = keys[next++];
          const answer = await post(api.baseUrl!, key, h.page(), { 'idempotency-key': idem });
          first.set(idem, answer);
          if (!killed && first.size >= killAfter) {
            killed = true;
            await api.kill('SIGKILL');
          }
        }
      }),
    );
    const cut = [...first.values()].filter((a) => a.status !== 202).length;
    api = await h.start('main', { ...env, WORKER_MODE: 'off' });
    const restartedAt = Date.now();

    // Replay every key (the ones never sent too): 202, or 409 while a killed request's lease holds its key.
    const final = new Map<string, Answer>();
    const held: string[] = [];
    await inLanes(keys, CONCURRENCY, async (idem) => {
      const answer = await post(api.baseUrl!, key, h.page(), { 'idempotency-key': idem });
      if (answer.status === 202) final.set(idem, answer);
      else {
        expect(answer.status).toBe(409);
        held.push(idem);
      }
    });
    // A key is held only by a request the killed API never answered.
    for (const idem of held) expect(first.get(idem)?.status).not.toBe(202);
    // Once those leases run out, each held key is accepted at the next replay.
    expect(await db.runOutLeases(keyId)).toBe(held.length);
    await inLanes(held, CONCURRENCY, async (idem) => {
      const answer = await post(api.baseUrl!, key, h.page(), { 'idempotency-key': idem });
      expect(answer.status).toBe(202);
      final.set(idem, answer);
    });
    const replayed = [...final.values()].filter((a) => a.body && a.status === 202).length;
    const ended = await db.allEnded(keyId, 180_000, () => h.logs());
    const jobs = await db.jobs(keyId);
    const used = await db.used(keyId);
    const ids = new Set([...final.values()].map((a) => a.body.id));
    for (const [idem, answer] of first) if (answer.status === 202) expect(final.get(idem)!.body.id).toBe(answer.body.id);
    console.log(
      `outage (API SIGKILLed after ${killAfter} of ${KEYS} keyed POSTs, ${CONCURRENCY} at once): ${cut} requests cut or unsent; ` +
        `after restart ${replayed} keys answered 202 (${held.length} held by a lease until it ran out), ${ids.size} distinct jobs, ` +
        `${jobs.length} job rows, quota ${used}, duplicates ${jobs.length - ids.size}; ` +
        `${jobs.filter((j) => j.status === 'done').length} done, ${jobs.filter((j) => j.status === 'failed').length} failed, ` +
        `all ended ${Date.now() - restartedAt} ms after the restart (${ended} ms after the last replay)`,
    );
    expect(ids.size).toBe(KEYS);
    expect(jobs).toHaveLength(KEYS);
    expect(used).toBe(KEYS);
    expect(jobs.every((j) => j.status === 'done')).toBe(true);
    await db.close();
  }, 300_000);
});
