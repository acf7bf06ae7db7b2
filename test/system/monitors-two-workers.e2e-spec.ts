import { Pool } from 'pg';
import { createKey, sleep, waitFor } from '../support/outage';
import { useOutageHarness } from '../support/outage-scenario';

const MONITORS = 10;
const INTERVAL_S = 2;
const SCHEDULE_RUNS_MS = 10_000;

/**
 * Records, in the scenario's own database, what the service does not: every claim of a slot (a
 * scheduler's update moving a monitor's `next_check_at` from one time to a later one: the slot it
 * claimed, the next slot, the claiming connection's `application_name`, its transaction) and the
 * transaction each check was inserted in. Test instrumentation only; the service never reads it.
 */
const RECORD_CLAIMS_SQL = `
  CREATE TABLE test_claims (monitor_id varchar, slot timestamptz, next_slot timestamptz, claimed_by text, tx bigint, claimed_at timestamptz);
  CREATE TABLE test_check_tx (check_id varchar, monitor_id varchar, tx bigint);
  CREATE FUNCTION test_record_claim() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
    INSERT INTO test_claims VALUES (NEW.id, OLD.next_check_at, NEW.next_check_at, current_setting('application_name'), txid_current(), clock_timestamp());
    RETURN NEW;
  END $$;
  CREATE TRIGGER test_claims AFTER UPDATE OF next_check_at ON monitors FOR EACH ROW
    WHEN (OLD.next_check_at IS NOT NULL AND NEW.next_check_at IS NOT NULL AND OLD.next_check_at IS DISTINCT FROM NEW.next_check_at)
    EXECUTE FUNCTION test_record_claim();
  CREATE FUNCTION test_record_check() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
    INSERT INTO test_check_tx VALUES (NEW.id, NEW.monitor_id, txid_current());
    RETURN NEW;
  END $$;
  CREATE TRIGGER test_check_tx AFTER INSERT ON monitor_checks FOR EACH ROW EXECUTE FUNCTION test_record_check();`;

interface Claim {
  monitor_id: string;
  slot: Date;
  next_slot: Date;
  claimed_by: string;
  tx: string;
  claimed_at: Date;
}

interface CheckRow {
  id: string;
  monitor_id: string;
  job_id: string | null;
  status: string;
  created_at: Date;
  completed_at: Date | null;
  job_completed_at: Date | null;
  tx: string | null;
}

/** Groups `rows` by their `monitor_id`, in the order given. */
function byMonitor<T extends { monitor_id: string }>(rows: T[]): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const row of rows) groups.set(row.monitor_id, [...(groups.get(row.monitor_id) ?? []), row]);
  return groups;
}

/**
 * The monitors' schedule with two real worker processes (docs/monitors.md, "Schedule"; CONTRACT.md,
 * "Monitors"): an API without processors and two `dist/worker.js` processes on one PostgreSQL and
 * Redis, the schedule running on its own (no `/check`). Read in PostgreSQL, with triggers recording
 * each claim: each slot was claimed once, when due, by one of the workers, and each slot claimed led
 * to the next (none lost, none run twice); each check belongs to one claim; checks of one monitor
 * never overlap; the quota counts one per check.
 */
describe('monitors: the schedule with two worker processes', () => {
  const h = useOutageHarness();

  it('runs each slot once, by either worker, never overlapping the checks of a monitor, one quota unit per check', async () => {
    const t0 = Date.now();
    const { env, db, key, keyId } = await h.setUp();
    // A second account's key: the claims of one batch then touch the quota rows of two keys. Made through
    // the built CLI (dist/cli.js), the one test that runs it as a process.
    const other = createKey(env.DATABASE_URL, env.REDIS_URL);
    const pg = new Pool({ connectionString: env.DATABASE_URL, max: 1 });
    try {
      await pg.query(RECORD_CLAIMS_SQL);
      const schedule = { MONITOR_MIN_INTERVAL_S: String(INTERVAL_S), MONITOR_TICK_MS: '200' };
      const [api] = await Promise.all([
        h.start('main', { ...env, ...schedule, WORKER_MODE: 'off', PGAPPNAME: 'api' }),
        h.start('worker', { ...env, ...schedule, PGAPPNAME: 'worker-1' }),
        h.start('worker', { ...env, ...schedule, PGAPPNAME: 'worker-2' }),
      ]);
      const startedMs = Date.now() - t0;
      const headers = (secret: string) => ({ authorization: `Bearer ${secret}`, 'content-type': 'application/json' });
      const keyOf = (i: number) => (i % 2 ? other.key : key);
      const ids: string[] = [];
      for (let i = 0; i < MONITORS; i++) {
        const res = await fetch(`${api.baseUrl}/v1/monitors`, {
          method: 'POST',
          headers: headers(keyOf(i)),
          body: JSON.stringify({ url: `${h.page().url}?m=${i}`, width: 320, height: 240, schedule: { intervalSeconds: INTERVAL_S } }),
        });
        expect(res.status).toBe(201);
        ids.push(((await res.json()) as { id: string }).id);
      }
      await sleep(SCHEDULE_RUNS_MS);
      // On a loaded machine a check can outlast its 2 s slot (the next slot is then skipped): the
      // schedule goes on until every monitor has been checked twice, however long that takes.
      await waitFor(
        'every monitor to be checked twice',
        async () =>
          (
            await pg.query(
              `SELECT count(*)::int AS n FROM monitors m
                WHERE (SELECT count(*) FROM monitor_checks c WHERE c.monitor_id = m.id) < 2`,
            )
          ).rows[0].n === 0,
        60_000,
        250,
      ).catch((err) => {
        throw new Error(`${(err as Error).message}\n${h.logs()}`);
      });
      for (const [i, id] of ids.entries()) {
        const res = await fetch(`${api.baseUrl}/v1/monitors/${id}`, {
          method: 'PATCH',
          headers: headers(keyOf(i)),
          body: JSON.stringify({ enabled: false }),
        });
        expect(res.status).toBe(200);
      }
      await waitFor(
        'every check to end',
        async () => (await pg.query(`SELECT count(*)::int AS n FROM monitor_checks WHERE status = 'pending'`)).rows[0].n === 0,
        60_000,
        250,
      ).catch((err) => {
        throw new Error(`${(err as Error).message}\n${h.logs()}`);
      });
      const endedMs = Date.now() - t0;

      const claims: Claim[] = (await pg.query(`SELECT * FROM test_claims ORDER BY monitor_id, claimed_at`)).rows;
      const checks: CheckRow[] = (
        await pg.query(
          `SELECT c.id, c.monitor_id, c.job_id, c.status, c.created_at, c.completed_at, j.completed_at AS job_completed_at, t.tx
             FROM monitor_checks c LEFT JOIN screenshot_jobs j ON j.id = c.job_id LEFT JOIN test_check_tx t ON t.check_id = c.id
            ORDER BY c.monitor_id, c.created_at`,
        )
      ).rows;
      const jobs = [...(await db.jobs(keyId)), ...(await db.jobs(other.keyId))];
      const used = (await db.used(keyId)) + (await db.used(other.keyId));
      const failedTicks = h.logs(200_000).match(/Monitor tick failed: [^"]*/g) ?? [];

      const brokenChains: string[] = [];
      for (const [monitor, list] of byMonitor(claims)) {
        for (let i = 0; i < list.length; i++) {
          const claim = list[i];
          if (claim.slot > claim.claimed_at) brokenChains.push(`${monitor}: slot ${claim.slot.toISOString()} claimed before it was due`);
          if (i > 0 && claim.slot.getTime() !== list[i - 1].next_slot.getTime()) {
            brokenChains.push(
              `${monitor}: claimed ${claim.slot.toISOString()}, the slot before set ${list[i - 1].next_slot.toISOString()}`,
            );
          }
        }
      }
      const claimOf = new Map(claims.map((c) => [`${c.monitor_id} ${c.tx}`, c]));
      const checksOfSlot = new Map<string, number>();
      for (const c of checks) {
        const claim = claimOf.get(`${c.monitor_id} ${c.tx}`);
        const slot = claim ? `${c.monitor_id} ${claim.slot.toISOString()}` : `${c.id}: no claim`;
        checksOfSlot.set(slot, (checksOfSlot.get(slot) ?? 0) + 1);
      }
      const overlaps: string[] = [];
      const gaps: number[] = [];
      const checksByMonitor = byMonitor(checks);
      for (const list of checksByMonitor.values()) {
        for (let i = 1; i < list.length; i++) {
          const [before, after] = [list[i - 1], list[i]];
          gaps.push(after.created_at.getTime() - before.created_at.getTime());
          const ended = Math.max(before.completed_at?.getTime() ?? Infinity, before.job_completed_at?.getTime() ?? 0);
          if (ended > after.created_at.getTime()) overlaps.push(`${before.id} (ended ${ended}) overlaps ${after.id}`);
        }
      }
      const counts = [...checksByMonitor.values()].map((l) => l.length);
      const claimedBy = (who: string) => claims.filter((c) => c.claimed_by === who).length;
      console.log(
        `monitors with two workers: ${MONITORS} monitors every ${INTERVAL_S} s for at least ${SCHEDULE_RUNS_MS / 1000} s: ` +
          `${claims.length} slots claimed (worker-1 ${claimedBy('worker-1')}, worker-2 ${claimedBy('worker-2')}), ` +
          `${claims.length - checks.length} skipped as the previous check still ran; ${checks.length} checks ` +
          `(per monitor ${Math.min(...counts)}–${Math.max(...counts)}), ${checks.filter((c) => c.status === 'failed').length} failed, ` +
          `closest two checks of one monitor ${Math.min(...gaps)} ms apart; ${jobs.length} jobs, quota ${used}; ` +
          `${failedTicks.length} ticks failed; processes up after ${startedMs} ms, every check ended after ${endedMs} ms`,
      );

      // The schedule ran on its own, more than once per monitor, on both workers and only there.
      expect(checksByMonitor.size).toBe(MONITORS);
      expect(Math.min(...counts)).toBeGreaterThanOrEqual(2);
      expect(claimedBy('worker-1')).toBeGreaterThan(0);
      expect(claimedBy('worker-2')).toBeGreaterThan(0);
      expect(claimedBy('worker-1') + claimedBy('worker-2')).toBe(claims.length);
      // No tick failed: two workers claiming the checks of two keys at once take their locks in one order.
      expect(failedTicks).toEqual([]);
      // Each slot claimed once, when due, and each claim moved on to the slot claimed next.
      expect(brokenChains).toEqual([]);
      // Each check belongs to one claimed slot, and no slot has two checks.
      expect([...checksOfSlot].filter(([slot, n]) => slot.endsWith('no claim') || n > 1)).toEqual([]);
      // Checks of one monitor never overlap: each ended (capture and comparison) before the next began.
      expect(overlaps).toEqual([]);
      expect(checks.every((c) => c.status !== 'failed')).toBe(true);
      // One capture job and one quota unit per check, each job once.
      expect(new Set(checks.map((c) => c.job_id)).size).toBe(checks.length);
      expect(jobs.map((j) => j.id).sort()).toEqual(checks.map((c) => c.job_id).sort());
      expect(used).toBe(checks.length);
    } finally {
      await pg.end();
      await db.close();
    }
  }, 150_000);
});
