import { Module } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { EventsModule } from '../events/events.module';
import { QuotaUsage } from './quota-usage.entity';
import { QuotaWarning } from './quota-warning.entity';
import { QuotaService } from './quota.service';
import { RateLimitHeadersInterceptor } from './rate-limit-headers';

/** Monthly quotas per API key: reservation, status, warnings, and the `X-RateLimit-*` headers of every authenticated response. */
@Module({
  imports: [TypeOrmModule.forFeature([QuotaUsage, QuotaWarning]), EventsModule],
  providers: [QuotaService, { provide: APP_INTERCEPTOR, useClass: RateLimitHeadersInterceptor }],
  exports: [QuotaService],
})
export class QuotaModule {}
