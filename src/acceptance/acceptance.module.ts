import { Module } from '@nestjs/common';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { QuotaModule } from '../quota/quota.module';
import { AcceptanceService } from './acceptance.service';

/** {@link AcceptanceService}: one transaction for quota, rows and idempotency record, queueing after it. */
@Module({
  imports: [QuotaModule, IdempotencyModule],
  providers: [AcceptanceService],
  exports: [AcceptanceService],
})
export class AcceptanceModule {}
