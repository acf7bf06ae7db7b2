import { MigrationInterface, QueryRunner } from 'typeorm';

/** `thumbnailUrl` of screenshot jobs: the name of the stored thumbnail (CONTRACT.md, "Capture options, second set": `thumbnail`). */
export class Thumbnails1795730000000 implements MigrationInterface {
  name = 'Thumbnails1795730000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "screenshot_jobs" ADD "thumbnail_file" character varying(64)`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "screenshot_jobs" DROP COLUMN "thumbnail_file"`);
  }
}
