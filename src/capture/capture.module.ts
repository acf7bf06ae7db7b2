import { Module } from '@nestjs/common';
import { BrowserModule } from '../browser/browser.module';
import { EgressModule } from '../egress/egress.module';
import { CaptureEngine } from './capture-engine';

/** The capture procedure on the browser pool; the options type lives in `capture-options.ts`. */
@Module({
  imports: [BrowserModule, EgressModule],
  providers: [CaptureEngine],
  exports: [CaptureEngine, BrowserModule],
})
export class CaptureModule {}
