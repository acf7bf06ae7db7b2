import { MigrationInterface, QueryRunner } from 'typeorm';

/** The tables whose rows count, and the statuses in which a row has not ended. */
const OPEN_WORK: [string, string[]][] = [
  ['screenshot_jobs', ['pending', 'processing']],
  ['runs', ['pending', 'running']],
];

/** `'a', 'b'`: statuses as SQL literals (the code's own constants, never input). */
const sqlList = (statuses: string[]) => statuses.map((status) => `'${status}'`).join(', ');

/** The trigger events and the transition tables `count_open_work` reads for each. */
const EVENTS: [string, string][] = [
  ['INSERT', 'NEW TABLE AS new_rows'],
  ['UPDATE', 'OLD TABLE AS old_rows NEW TABLE AS new_rows'],
  ['DELETE', 'OLD TABLE AS old_rows'],
];

/**
 * The accept path (docs/performance.md#accept-path): each account's capture jobs and runs not yet ended, kept as one counter row
 * (`account_open_work`) by statement triggers on `screenshot_jobs` and `runs`, so the acceptance reads
 * one row instead of counting up to MAX_PENDING_JOBS_PER_ACCOUNT index entries (a cost that grew with
 * the backlog). Every INSERT, UPDATE and DELETE goes through the triggers, whatever code runs it; the
 * statuses that count as "not yet ended" are the triggers' arguments (`PendingJobsLimit` documents
 * them). TRUNCATE fires none of them: truncate the counter with the tables (the tests do).
 */
export class OpenWorkCounter1795520000000 implements MigrationInterface {
  name = 'OpenWorkCounter1795520000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "account_open_work" (
                "account_id" character varying(40) NOT NULL REFERENCES "accounts"("id") ON DELETE CASCADE,
                "open" integer NOT NULL,
                CONSTRAINT "PK_account_open_work" PRIMARY KEY ("account_id")
            )
        `);
    // TG_ARGV: the statuses in which a row has not ended. A change of status moves the count;
    // a deleted account's counter row goes with it (ON DELETE CASCADE), so DELETE only subtracts.
    await queryRunner.query(`
            CREATE FUNCTION "count_open_work"() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
              IF TG_OP = 'INSERT' THEN
                INSERT INTO account_open_work (account_id, open)
                  SELECT account_id, count(*) FROM new_rows WHERE status::text = ANY (TG_ARGV) GROUP BY account_id
                  ON CONFLICT (account_id) DO UPDATE SET open = account_open_work.open + EXCLUDED.open;
              ELSIF TG_OP = 'UPDATE' THEN
                INSERT INTO account_open_work (account_id, open)
                  SELECT account_id, sum(moved.delta) FROM (
                      SELECT account_id, 1 AS delta FROM new_rows WHERE status::text = ANY (TG_ARGV)
                      UNION ALL
                      SELECT account_id, -1 FROM old_rows WHERE status::text = ANY (TG_ARGV)
                    ) AS moved
                   GROUP BY account_id HAVING sum(moved.delta) <> 0
                  ON CONFLICT (account_id) DO UPDATE SET open = account_open_work.open + EXCLUDED.open;
              ELSE
                UPDATE account_open_work AS w SET open = w.open - gone.n
                  FROM (SELECT account_id, count(*) AS n FROM old_rows WHERE status::text = ANY (TG_ARGV) GROUP BY account_id) AS gone
                 WHERE w.account_id = gone.account_id;
              END IF;
              RETURN NULL;
            END $$
        `);
    for (const [table, open] of OPEN_WORK) {
      // Creating the triggers locks out writers until the end of the migration, so the backfill below is exact.
      for (const [event, transitions] of EVENTS) {
        await queryRunner.query(
          `CREATE TRIGGER "${table}_open_work_${event.toLowerCase()}" AFTER ${event} ON "${table}" REFERENCING ${transitions} FOR EACH STATEMENT EXECUTE FUNCTION "count_open_work"(${sqlList(open)})`,
        );
      }
    }
    const openRows = OPEN_WORK.map(([table, open]) => `SELECT account_id FROM "${table}" WHERE status IN (${sqlList(open)})`);
    await queryRunner.query(`
            INSERT INTO "account_open_work" ("account_id", "open")
            SELECT account_id, count(*) FROM (${openRows.join(' UNION ALL ')}) AS open_work GROUP BY account_id
        `);
    for (const [table] of OPEN_WORK) await queryRunner.query(`DROP INDEX "public"."IDX_${table}_open_by_account"`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    for (const [table, open] of OPEN_WORK) {
      await queryRunner.query(
        `CREATE INDEX "IDX_${table}_open_by_account" ON "${table}" ("account_id") WHERE "status" IN (${sqlList(open)})`,
      );
      for (const [event] of EVENTS) await queryRunner.query(`DROP TRIGGER "${table}_open_work_${event.toLowerCase()}" ON "${table}"`);
    }
    await queryRunner.query(`DROP FUNCTION "count_open_work"()`);
    await queryRunner.query(`DROP TABLE "account_open_work"`);
  }
}
