import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Storage destinations (CONTRACT.md, "Storage destinations"): customers' buckets with sealed
 * credentials, and the job's `storage` (where its result was uploaded).
 */
export class StorageDestinations1795710000000 implements MigrationInterface {
  name = 'StorageDestinations1795710000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "storage_destinations" (
        "id" character varying(40) NOT NULL,
        "account_id" character varying(40) NOT NULL,
        "type" character varying(8) NOT NULL,
        "bucket" character varying(255) NOT NULL,
        "region" character varying(64) NOT NULL,
        "endpoint" character varying(2048),
        "force_path_style" boolean NOT NULL DEFAULT false,
        "prefix" character varying(512) NOT NULL DEFAULT '',
        "description" character varying(500) NOT NULL DEFAULT '',
        "credentials_sealed" text NOT NULL,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        CONSTRAINT "PK_storage_destinations" PRIMARY KEY ("id"),
        CONSTRAINT "FK_468783d29e97898a2fd06509dbb" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION
      )`);
    await queryRunner.query(`CREATE INDEX "IDX_d3c8f352d8ea5eec1b3b4f120f" ON "storage_destinations" ("account_id", "created_at")`);
    await queryRunner.query(`ALTER TABLE "screenshot_jobs" ADD "storage" jsonb`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "screenshot_jobs" DROP COLUMN "storage"`);
    await queryRunner.query(`DROP TABLE "storage_destinations"`);
  }
}
