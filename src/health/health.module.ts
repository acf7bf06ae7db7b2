import { Global, Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { BrowserModule } from '../browser/browser.module';
import { DrainState } from './drain-state';
import { HealthController } from './health.controller';
import { HealthService } from './health.service';
import { InFlightRequests } from './in-flight-requests';
import { RedisProbe } from './redis-probe';

/** `/health` and `/ready`, the process's {@link DrainState} and {@link InFlightRequests} (global: shutdown code reads them). */
@Global()
@Module({
  imports: [TerminusModule.forRoot({ logger: false }), BrowserModule],
  controllers: [HealthController],
  providers: [HealthService, DrainState, InFlightRequests, RedisProbe],
  exports: [HealthService, DrainState, InFlightRequests],
})
export class HealthModule {}
