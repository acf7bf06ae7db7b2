import { MigrationInterface, QueryRunner } from 'typeorm';

/** A job stores its resolved capture options as one jsonb value (null on older rows: the defaults). */
export class CaptureOptions1795218700000 implements MigrationInterface {
  name = 'CaptureOptions1795218700000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "screenshot_jobs"
            ADD "options" jsonb
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "screenshot_jobs" DROP COLUMN "options"
        `);
  }
}
