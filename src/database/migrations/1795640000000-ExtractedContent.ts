import { MigrationInterface, QueryRunner } from 'typeorm';

/** A screenshot job's extracted content (docs/CONTRACT.md, "Extracted content"): its files and metadata, null without `extract`. */
export class ExtractedContent1795640000000 implements MigrationInterface {
  name = 'ExtractedContent1795640000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "screenshot_jobs" ADD "extracted" jsonb`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "screenshot_jobs" DROP COLUMN "extracted"`);
  }
}
