import { BullModule } from '@nestjs/bull';
import { Module } from '@nestjs/common';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { RETENTION_QUEUE } from '../queue/queues';
import { QuotaModule } from '../quota/quota.module';
import { RenderModule } from '../render/render.module';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { RetentionProcessor } from './retention.processor';

/** The retention job: rows past their retention deleted in bounded batches ({@link RetentionProcessor}). */
@Module({
  imports: [BullModule.registerQueue({ name: RETENTION_QUEUE }), IdempotencyModule, QuotaModule, RenderModule, WebhooksModule],
  providers: [RetentionProcessor],
})
export class RetentionModule {}
