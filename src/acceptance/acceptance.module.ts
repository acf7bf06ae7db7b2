import { Module } from '@nestjs/common';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { QuotaModule } from '../quota/quota.module';
import { AcceptanceService } from './acceptance.service';
import { PendingJobsLimit } from './pending-jobs-limit';

/** {@link AcceptanceService}: one statement for back-pressure ({@link PendingJobsLimit}), quota, rows and idempotency record, queueing after it. */
@Module({
  imports: [QuotaModule, IdempotencyModule],
  providers: [AcceptanceService, PendingJobsLimit],
  exports: [AcceptanceService],
})
export class AcceptanceModule {}
