import { Global, Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { BrowserModule } from '../browser/browser.module';
import { DrainState } from './drain-state';
import { HealthController } from './health.controller';
import { HealthService } from './health.service';
import { RedisProbe } from './redis-probe';

/** `/health` and `/ready`, and the process's {@link DrainState} (global: shutdown code sets it). */
@Global()
@Module({
  imports: [TerminusModule.forRoot({ logger: false }), BrowserModule],
  controllers: [HealthController],
  providers: [HealthService, DrainState, RedisProbe],
  exports: [HealthService, DrainState],
})
export class HealthModule {}
