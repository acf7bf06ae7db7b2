import { MigrationInterface, QueryRunner } from 'typeorm';

export class SignInFailuresByIp1795510000000 implements MigrationInterface {
  name = 'SignInFailuresByIp1795510000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE INDEX "IDX_a1ff02739b2c601cd10b126ee5" ON "sign_in_failures" ("ip", "failed_at")
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            DROP INDEX "public"."IDX_a1ff02739b2c601cd10b126ee5"
        `);
  }
}
