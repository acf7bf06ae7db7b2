import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { IdempotencyRecord } from './idempotency-record.entity';
import { IdempotencyInterceptor } from './idempotency.interceptor';
import { IdempotencyService } from './idempotency.service';
import { PreferWait } from './prefer-wait';

/** The `Idempotency-Key` store and the interceptor behind `@Idempotent()`; import it where the decorator is used. */
@Module({
  imports: [TypeOrmModule.forFeature([IdempotencyRecord])],
  providers: [IdempotencyService, IdempotencyInterceptor, PreferWait],
  exports: [IdempotencyService, IdempotencyInterceptor, PreferWait],
})
export class IdempotencyModule {}
