import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The account ceiling (CONTRACT.md, "Quotas"; docs/errors-and-quotas.md): each account's screenshots
 * counted this month by all its keys together, revoked ones included, as one row per account in
 * `account_quota_usage` (`month`: the month it counts, `YYYY-MM-01`, `-infinity` before the account's
 * first count; a row of an earlier month counts 0 for the current one).
 *
 * - Every account has its row from its creation (a trigger on `accounts`; this migration adds the rows of
 *   the accounts that exist), so the acceptance statement can lock it (`SELECT … FOR UPDATE`) and read its
 *   latest value before it counts anything (`QuotaService.reservation`).
 * - A row trigger on `quota_usage` adds each change of a key's usage to its account's row, whatever code
 *   writes it: a first count in a newer month starts the row again from that count; a change of an
 *   older month than the row's is left out. A deleted usage row (its key deleted) takes nothing back: what
 *   was spent this month stays spent.
 */
export class AccountQuota1795745000000 implements MigrationInterface {
  name = 'AccountQuota1795745000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "account_quota_usage" (
                "account_id" character varying(40) NOT NULL REFERENCES "accounts"("id") ON DELETE CASCADE,
                "month" date NOT NULL,
                "used" integer NOT NULL,
                CONSTRAINT "PK_account_quota_usage" PRIMARY KEY ("account_id")
            )
        `);
    await queryRunner.query(`
            CREATE FUNCTION "open_account_quota"() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
              INSERT INTO account_quota_usage (account_id, month, used)
                VALUES (NEW.id, '-infinity'::date, 0)
                ON CONFLICT (account_id) DO NOTHING;
              RETURN NULL;
            END $$
        `);
    await queryRunner.query(
      `CREATE TRIGGER "accounts_open_account_quota" AFTER INSERT ON "accounts" FOR EACH ROW EXECUTE FUNCTION "open_account_quota"()`,
    );
    await queryRunner.query(`
            CREATE FUNCTION "count_account_quota"() RETURNS trigger LANGUAGE plpgsql AS $$
            DECLARE
              delta integer := NEW.used;
            BEGIN
              IF TG_OP = 'UPDATE' THEN
                delta := NEW.used - OLD.used;
              END IF;
              IF delta = 0 THEN
                RETURN NULL;
              END IF;
              UPDATE account_quota_usage AS a
                 SET used = CASE WHEN a.month = NEW.month THEN a.used + delta ELSE NEW.used END,
                     month = NEW.month
                FROM api_keys AS k
               WHERE k.id = NEW.api_key_id AND a.account_id = k.account_id AND a.month <= NEW.month;
              RETURN NULL;
            END $$
        `);
    await queryRunner.query(
      `CREATE TRIGGER "quota_usage_count_account_quota" AFTER INSERT OR UPDATE OF "used" ON "quota_usage" FOR EACH ROW EXECUTE FUNCTION "count_account_quota"()`,
    );
    // Creating the triggers locks out writers until the end of the migration, so the rows below are exact.
    await queryRunner.query(`
            INSERT INTO "account_quota_usage" ("account_id", "month", "used")
            SELECT a.id, m.month, COALESCE(sum(u.used), 0)::int
              FROM accounts a
             CROSS JOIN (SELECT date_trunc('month', now() AT TIME ZONE 'UTC')::date AS month) AS m
              LEFT JOIN api_keys k ON k.account_id = a.id
              LEFT JOIN quota_usage u ON u.api_key_id = k.id AND u.month = m.month
             GROUP BY a.id, m.month
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER "quota_usage_count_account_quota" ON "quota_usage"`);
    await queryRunner.query(`DROP FUNCTION "count_account_quota"()`);
    await queryRunner.query(`DROP TRIGGER "accounts_open_account_quota" ON "accounts"`);
    await queryRunner.query(`DROP FUNCTION "open_account_quota"()`);
    await queryRunner.query(`DROP TABLE "account_quota_usage"`);
  }
}
