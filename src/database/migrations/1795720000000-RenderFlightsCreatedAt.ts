import { MigrationInterface, QueryRunner } from 'typeorm';

/** An index on `render_flights.created_at`, the cut-off column of the retention job's purge of old single-flight slots. */
export class RenderFlightsCreatedAt1795720000000 implements MigrationInterface {
  name = 'RenderFlightsCreatedAt1795720000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE INDEX "IDX_render_flights_created_at" ON "render_flights" ("created_at")`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "IDX_render_flights_created_at"`);
  }
}
