import { MigrationInterface, QueryRunner } from 'typeorm';

export class IdempotencyKeys1795218527614 implements MigrationInterface {
  name = 'IdempotencyKeys1795218527614';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "idempotency_keys" (
                "api_key_id" character varying(40) NOT NULL,
                "method" character varying(10) NOT NULL,
                "path" text NOT NULL,
                "key" character varying(128) NOT NULL,
                "fingerprint" character(64) NOT NULL,
                "lease_token" character varying(32) NOT NULL,
                "response_status" smallint,
                "response_body" text,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                CONSTRAINT "PK_82d6f1cd500c8e09990f9e2cd48" PRIMARY KEY ("api_key_id", "method", "path", "key")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_e5fc0731b6752a8e9194fa265e" ON "idempotency_keys" ("expires_at")
        `);
    await queryRunner.query(`
            ALTER TABLE "idempotency_keys"
            ADD CONSTRAINT "FK_df33199f3504b21d6dfc3ae686d" FOREIGN KEY ("api_key_id") REFERENCES "api_keys"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "idempotency_keys" DROP CONSTRAINT "FK_df33199f3504b21d6dfc3ae686d"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_e5fc0731b6752a8e9194fa265e"
        `);
    await queryRunner.query(`
            DROP TABLE "idempotency_keys"
        `);
  }
}
