import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Render keys belong to their API key like jobs and runs (KeyOwnedWork): an index and a foreign key on
 * `api_key_id` (deleting the key deletes its render keys).
 */
export class RenderKeysApiKey1795740000000 implements MigrationInterface {
  name = 'RenderKeysApiKey1795740000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE INDEX "IDX_d0cf065a7cb4f1924ad496c81c" ON "render_keys" ("api_key_id")
        `);
    await queryRunner.query(`
            ALTER TABLE "render_keys"
            ADD CONSTRAINT "FK_d0cf065a7cb4f1924ad496c81cd" FOREIGN KEY ("api_key_id") REFERENCES "api_keys"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "render_keys" DROP CONSTRAINT "FK_d0cf065a7cb4f1924ad496c81cd"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_d0cf065a7cb4f1924ad496c81c"
        `);
  }
}
