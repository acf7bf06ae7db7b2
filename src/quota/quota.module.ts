import { Module } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { EventsModule } from '../events/events.module';
import { QuotaUsage } from './quota-usage.entity';
import { QuotaWarning } from './quota-warning.entity';
import { QuotaService } from './quota.service';
import { RateLimitHeadersInterceptor } from './rate-limit-headers';
import { RequestRateLimiter } from './request-rate-limiter';

/**
 * Monthly quotas per API key: reservation, status, warnings, and the `X-RateLimit-*` headers of every
 * authenticated response; and the short-interval request rate per key (`RATE_LIMIT_PER_SECOND`). One global
 * interceptor applies both (the rate limit inside, so its 429 carries the headers).
 */
@Module({
  imports: [TypeOrmModule.forFeature([QuotaUsage, QuotaWarning]), EventsModule],
  providers: [QuotaService, RequestRateLimiter, { provide: APP_INTERCEPTOR, useClass: RateLimitHeadersInterceptor }],
  exports: [QuotaService, RequestRateLimiter],
})
export class QuotaModule {}
