import { BullModule } from '@nestjs/bull';
import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthModule } from '../auth/auth.module';
import { EgressModule } from '../egress/egress.module';
import { EventsModule } from '../events/events.module';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { WEBHOOK_QUEUE } from '../queue/queues';
import { WebhookAttempts } from './webhook-deliveries-attempts';
import { DeliveryLifecycle } from './webhook-delivery-lifecycle';
import { WebhookFanOut } from './webhook-deliveries-fan-out';
import { WebhookRecovery } from './webhook-deliveries-recovery';
import { WebhookDelivery } from './webhook-delivery.entity';
import { WebhookDeliveryProcessor } from './webhook-delivery.processor';
import { WebhookEndpoint } from './webhook-endpoint.entity';
import { WebhookSender } from './webhook-sender';
import { WebhookTargetPolicy } from './webhook-target';
import { WebhooksController } from './webhooks.controller';
import { WebhooksService } from './webhooks.service';

/**
 * Signed webhooks: endpoints, the fan-out of events into deliveries (registered as an event sink at
 * start-up), the delivery processor and the delivery log.
 */
@Module({
  imports: [
    TypeOrmModule.forFeature([WebhookEndpoint, WebhookDelivery]),
    BullModule.registerQueue({ name: WEBHOOK_QUEUE }),
    AuthModule,
    EgressModule,
    EventsModule,
    IdempotencyModule,
  ],
  controllers: [WebhooksController],
  providers: [
    WebhooksService,
    WebhookFanOut,
    WebhookAttempts,
    DeliveryLifecycle,
    WebhookRecovery,
    WebhookDeliveryProcessor,
    WebhookSender,
    WebhookTargetPolicy,
  ],
  exports: [WebhooksService, WebhookRecovery],
})
export class WebhooksModule {}
