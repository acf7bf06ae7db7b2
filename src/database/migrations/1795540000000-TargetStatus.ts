import { MigrationInterface, QueryRunner } from 'typeorm';

/** `targetStatus` of screenshot jobs: the HTTP status of the page's main document (CONTRACT.md, "Capture options, second set"). */
export class TargetStatus1795540000000 implements MigrationInterface {
  name = 'TargetStatus1795540000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "screenshot_jobs" ADD "target_status" smallint`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "screenshot_jobs" DROP COLUMN "target_status"`);
  }
}
