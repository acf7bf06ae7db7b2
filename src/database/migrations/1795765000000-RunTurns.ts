import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Fair share of browser session runs across accounts (CONTRACT.md, "Tenancy: fair share and
 * isolation"; docs/durability.md, "Fair share"): `run_turns`, when each account last had a run
 * claimed (kept apart from `account_turns`, the captures' turns, so a capture backlog never moves an
 * account's place among runs), and an index of the pending runs by account (the turn check).
 */
export class RunTurns1795765000000 implements MigrationInterface {
  name = 'RunTurns1795765000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "run_turns" (
                "account_id" character varying(40) NOT NULL REFERENCES "accounts"("id") ON DELETE CASCADE,
                "served_at" timestamp with time zone NOT NULL,
                CONSTRAINT "PK_run_turns" PRIMARY KEY ("account_id")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_runs_pending_by_account" ON "runs" ("account_id")
            WHERE status = 'pending'
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."IDX_runs_pending_by_account"`);
    await queryRunner.query(`DROP TABLE "run_turns"`);
  }
}
