import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The counters of the PostgreSQL-backed rate limits (dashboard sign-up, webhook test pings): the
 * table layout rate-limiter-flexible's RateLimiterPostgres uses (key, points, expire in Unix ms).
 */
export class RateLimits1795530000000 implements MigrationInterface {
  name = 'RateLimits1795530000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "rate_limits" (
                "key" character varying(255) NOT NULL,
                "points" integer NOT NULL DEFAULT 0,
                "expire" bigint,
                CONSTRAINT "PK_rate_limits" PRIMARY KEY ("key")
            )
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "rate_limits"`);
  }
}
