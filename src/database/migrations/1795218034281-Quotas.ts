import { MigrationInterface, QueryRunner } from 'typeorm';

export class Quotas1795218034281 implements MigrationInterface {
  name = 'Quotas1795218034281';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "quota_usage" (
                "api_key_id" character varying(40) NOT NULL,
                "month" date NOT NULL,
                "used" integer NOT NULL,
                CONSTRAINT "PK_9e5d4612f696417c9fa00ab5975" PRIMARY KEY ("api_key_id", "month")
            )
        `);
    await queryRunner.query(`
            CREATE TABLE "quota_warnings" (
                "api_key_id" character varying(40) NOT NULL,
                "month" date NOT NULL,
                "threshold_percent" smallint NOT NULL,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                CONSTRAINT "PK_779856785d053f448fe1fb08174" PRIMARY KEY ("api_key_id", "month", "threshold_percent")
            )
        `);
    await queryRunner.query(`
            ALTER TABLE "quota_usage"
            ADD CONSTRAINT "FK_c84d8f182d5536893de949fb68e" FOREIGN KEY ("api_key_id") REFERENCES "api_keys"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
    await queryRunner.query(`
            ALTER TABLE "quota_warnings"
            ADD CONSTRAINT "FK_0e5b0bc2a940c1d87db75033d46" FOREIGN KEY ("api_key_id") REFERENCES "api_keys"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "quota_warnings" DROP CONSTRAINT "FK_0e5b0bc2a940c1d87db75033d46"
        `);
    await queryRunner.query(`
            ALTER TABLE "quota_usage" DROP CONSTRAINT "FK_c84d8f182d5536893de949fb68e"
        `);
    await queryRunner.query(`
            DROP TABLE "quota_warnings"
        `);
    await queryRunner.query(`
            DROP TABLE "quota_usage"
        `);
  }
}
