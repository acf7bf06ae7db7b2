import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { EventsModule } from '../events/events.module';
import { QuotaUsage } from './quota-usage.entity';
import { QuotaWarning } from './quota-warning.entity';
import { QuotaService } from './quota.service';

/** Monthly quotas per API key: reservation, status and warnings. */
@Module({
  imports: [TypeOrmModule.forFeature([QuotaUsage, QuotaWarning]), EventsModule],
  providers: [QuotaService],
  exports: [QuotaService],
})
export class QuotaModule {}
