import { MigrationInterface, QueryRunner } from 'typeorm';

export class Webhooks1795218228183 implements MigrationInterface {
  name = 'Webhooks1795218228183';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "webhook_endpoints" (
                "id" character varying(40) NOT NULL,
                "account_id" character varying(40) NOT NULL,
                "url" text NOT NULL,
                "events" jsonb NOT NULL,
                "description" character varying(500) NOT NULL DEFAULT '',
                "secret_sealed" text NOT NULL,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                CONSTRAINT "PK_054c4cfb95223732f5939d2d546" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_edc9553e0bad80d4750c264718" ON "webhook_endpoints" ("account_id", "created_at")
        `);
    await queryRunner.query(`
            CREATE TABLE "webhook_deliveries" (
                "id" character varying(40) NOT NULL,
                "seq" BIGSERIAL NOT NULL,
                "endpoint_id" character varying(40) NOT NULL,
                "event_id" character varying(40) NOT NULL,
                "type" character varying(64) NOT NULL,
                "payload" text NOT NULL,
                "status" character varying(16) NOT NULL,
                "attempts" integer NOT NULL DEFAULT '0',
                "response_code" integer,
                "error_message" text,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "last_attempt_at" TIMESTAMP WITH TIME ZONE,
                "next_attempt_at" TIMESTAMP WITH TIME ZONE,
                "attempt_started_at" TIMESTAMP WITH TIME ZONE,
                CONSTRAINT "PK_535dd409947fb6d8fc6dfc0112a" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_27d1ee90033bdafe0ffe8f1be6" ON "webhook_deliveries" ("event_id")
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_47a340074173ac16958ea6744d" ON "webhook_deliveries" ("status")
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_afd154e4c5ac15caedc6e8457d" ON "webhook_deliveries" ("endpoint_id", "seq")
        `);
    await queryRunner.query(`
            ALTER TABLE "webhook_endpoints"
            ADD CONSTRAINT "FK_4d6b730495c4aea409766707c49" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
    await queryRunner.query(`
            ALTER TABLE "webhook_deliveries"
            ADD CONSTRAINT "FK_0b882c26a9b91c26e6e86b4867c" FOREIGN KEY ("endpoint_id") REFERENCES "webhook_endpoints"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
    await queryRunner.query(`
            ALTER TABLE "webhook_deliveries"
            ADD CONSTRAINT "FK_27d1ee90033bdafe0ffe8f1be6f" FOREIGN KEY ("event_id") REFERENCES "events"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "webhook_deliveries" DROP CONSTRAINT "FK_27d1ee90033bdafe0ffe8f1be6f"
        `);
    await queryRunner.query(`
            ALTER TABLE "webhook_deliveries" DROP CONSTRAINT "FK_0b882c26a9b91c26e6e86b4867c"
        `);
    await queryRunner.query(`
            ALTER TABLE "webhook_endpoints" DROP CONSTRAINT "FK_4d6b730495c4aea409766707c49"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_afd154e4c5ac15caedc6e8457d"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_47a340074173ac16958ea6744d"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_27d1ee90033bdafe0ffe8f1be6"
        `);
    await queryRunner.query(`
            DROP TABLE "webhook_deliveries"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_edc9553e0bad80d4750c264718"
        `);
    await queryRunner.query(`
            DROP TABLE "webhook_endpoints"
        `);
  }
}
