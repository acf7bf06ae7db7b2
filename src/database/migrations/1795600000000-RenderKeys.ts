import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Render keys (CONTRACT.md, "Render links"), and the single-flight slot of render links: one row per
 * account and canonical link while its render runs (or, for 60 s, after it failed), so identical links
 * requested at once, on any API replica, join one job.
 */
export class RenderKeys1795600000000 implements MigrationInterface {
  name = 'RenderKeys1795600000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "render_keys" (
        "id" character varying(40) NOT NULL,
        "account_id" character varying(40) NOT NULL,
        "api_key_id" character varying(40) NOT NULL,
        "description" character varying(500) NOT NULL DEFAULT '',
        "allowed_hosts" jsonb NOT NULL DEFAULT '[]',
        "secret_sealed" text NOT NULL,
        "previous_secret_sealed" text,
        "previous_secret_expires_at" TIMESTAMP WITH TIME ZONE,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        CONSTRAINT "PK_render_keys" PRIMARY KEY ("id"),
        CONSTRAINT "FK_01681eac72bc92a04576d450290" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION
      )`);
    await queryRunner.query(`CREATE INDEX "IDX_b3f85f304561ada937cb472003" ON "render_keys" ("account_id", "created_at")`);
    await queryRunner.query(`
      CREATE TABLE "render_flights" (
        "account_id" character varying(40) NOT NULL,
        "cache_key" character varying(128) NOT NULL,
        "job_id" character varying(40) NOT NULL,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        CONSTRAINT "PK_render_flights" PRIMARY KEY ("account_id", "cache_key")
      )`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "render_flights"`);
    await queryRunner.query(`DROP TABLE "render_keys"`);
  }
}
