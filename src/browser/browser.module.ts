import { Module } from '@nestjs/common';
import { EgressModule } from '../egress/egress.module';
import { BrowserPool } from './browser-pool';

/**
 * The browser pool (launch, fresh-context leases, warm contexts, the capture lane, recycling, crash
 * retry, time budget). The page helpers on top of it are plain functions in `page-toolkit/`.
 */
@Module({
  imports: [EgressModule],
  providers: [BrowserPool],
  exports: [BrowserPool],
})
export class BrowserModule {}
