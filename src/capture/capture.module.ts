import { Module } from '@nestjs/common';
import { BrowserModule } from '../browser/browser.module';
import { EgressModule } from '../egress/egress.module';
import { CaptureEngine } from './capture-engine';
import { RequestBlockers } from './blockers';
import { SessionSetup } from './session-options';

/** The capture procedure on the browser pool; the options type lives in `capture-options.ts`, their application to a browser session in `session-options.ts` (also for runs). */
@Module({
  imports: [BrowserModule, EgressModule],
  providers: [CaptureEngine, SessionSetup, RequestBlockers],
  exports: [CaptureEngine, SessionSetup, BrowserModule],
})
export class CaptureModule {}
