import { Module } from '@nestjs/common';
import { EgressModule } from '../egress/egress.module';
import { BrowserPool } from './browser-pool';

/** The browser pool (launch, fresh-context leases, warm contexts, recycling, crash retry, time budget). */
@Module({
  imports: [EgressModule],
  providers: [BrowserPool],
  exports: [BrowserPool],
})
export class BrowserModule {}
