import { MigrationInterface, QueryRunner } from 'typeorm';

export class WebhookManagement1795437571935 implements MigrationInterface {
  name = 'WebhookManagement1795437571935';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "webhook_endpoints"
            ADD "previous_secret_sealed" text
        `);
    await queryRunner.query(`
            ALTER TABLE "webhook_endpoints"
            ADD "previous_secret_expires_at" TIMESTAMP WITH TIME ZONE
        `);
    await queryRunner.query(`
            ALTER TABLE "webhook_endpoints"
            ADD "signature_scheme" character varying(32) NOT NULL DEFAULT 'glimpse-v1'
        `);
    await queryRunner.query(`
            ALTER TABLE "webhook_endpoints"
            ADD "enabled" boolean NOT NULL DEFAULT true
        `);
    await queryRunner.query(`
            ALTER TABLE "webhook_endpoints"
            ADD "disabled_reason" character varying(16)
        `);
    await queryRunner.query(`
            ALTER TABLE "webhook_endpoints"
            ADD "disabled_at" TIMESTAMP WITH TIME ZONE
        `);
    await queryRunner.query(`
            ALTER TABLE "webhook_endpoints"
            ADD "healthy_at" TIMESTAMP WITH TIME ZONE
        `);
    // Existing endpoints start their auto-disable clock at creation.
    await queryRunner.query(`
            UPDATE "webhook_endpoints" SET "healthy_at" = "created_at"
        `);
    await queryRunner.query(`
            ALTER TABLE "webhook_endpoints" ALTER COLUMN "healthy_at" SET NOT NULL
        `);
    await queryRunner.query(`
            ALTER TABLE "webhook_deliveries"
            ADD "resend" boolean NOT NULL DEFAULT false
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "webhook_deliveries" DROP COLUMN "resend"
        `);
    await queryRunner.query(`
            ALTER TABLE "webhook_endpoints" DROP COLUMN "healthy_at"
        `);
    await queryRunner.query(`
            ALTER TABLE "webhook_endpoints" DROP COLUMN "disabled_at"
        `);
    await queryRunner.query(`
            ALTER TABLE "webhook_endpoints" DROP COLUMN "disabled_reason"
        `);
    await queryRunner.query(`
            ALTER TABLE "webhook_endpoints" DROP COLUMN "enabled"
        `);
    await queryRunner.query(`
            ALTER TABLE "webhook_endpoints" DROP COLUMN "signature_scheme"
        `);
    await queryRunner.query(`
            ALTER TABLE "webhook_endpoints" DROP COLUMN "previous_secret_expires_at"
        `);
    await queryRunner.query(`
            ALTER TABLE "webhook_endpoints" DROP COLUMN "previous_secret_sealed"
        `);
  }
}
