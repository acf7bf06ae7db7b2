import { MigrationInterface, QueryRunner } from 'typeorm';

export class CaptureEngine1795218600000 implements MigrationInterface {
  name = 'CaptureEngine1795218600000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "screenshot_uploads" (
                "job_id" character varying(40) NOT NULL,
                "document" bytea NOT NULL,
                "sha256" character varying(64) NOT NULL,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "PK_7f70342d209e74ea2d2db50c268" PRIMARY KEY ("job_id")
            )
        `);
    await queryRunner.query(`
            ALTER TABLE "screenshot_jobs"
            ADD "source" character varying(8) NOT NULL DEFAULT 'url'
        `);
    await queryRunner.query(`
            ALTER TABLE "screenshot_jobs"
            ADD "clipped" boolean NOT NULL DEFAULT false
        `);
    await queryRunner.query(`
            ALTER TABLE "screenshot_uploads"
            ADD CONSTRAINT "FK_7f70342d209e74ea2d2db50c268" FOREIGN KEY ("job_id") REFERENCES "screenshot_jobs"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "screenshot_uploads" DROP CONSTRAINT "FK_7f70342d209e74ea2d2db50c268"
        `);
    await queryRunner.query(`
            ALTER TABLE "screenshot_jobs" DROP COLUMN "clipped"
        `);
    await queryRunner.query(`
            ALTER TABLE "screenshot_jobs" DROP COLUMN "source"
        `);
    await queryRunner.query(`
            DROP TABLE "screenshot_uploads"
        `);
  }
}
