import { Module } from '@nestjs/common';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { QuotaModule } from '../quota/quota.module';
import { AcceptanceService } from './acceptance.service';
import { CaptureBacklog } from './capture-backlog';
import { PendingJobsLimit } from './pending-jobs-limit';

/** {@link AcceptanceService}: one statement for back-pressure ({@link PendingJobsLimit}), quota, rows and idempotency record, queueing after it. */
@Module({
  imports: [QuotaModule, IdempotencyModule],
  providers: [AcceptanceService, PendingJobsLimit, CaptureBacklog],
  exports: [AcceptanceService, CaptureBacklog],
})
export class AcceptanceModule {}
