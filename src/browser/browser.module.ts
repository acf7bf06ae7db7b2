import { Module } from '@nestjs/common';
import { EgressModule } from '../egress/egress.module';
import { BrowserPool } from './browser-pool';
import { SANDBOX_PROBE, systemProbe } from './browser-sandbox';
import { BROWSER_LAUNCHER, launchChromium } from './chromium-launch';

/**
 * The browser pool (launch, fresh-context leases, warm contexts, the capture lane, recycling, crash
 * retry, time budget, Chromium's sandbox). The page helpers on top of it are plain functions in
 * `page-toolkit/`. How browsers are launched and what says whether the sandbox can work are providers
 * (`BROWSER_LAUNCHER`, `SANDBOX_PROBE`), so a test can replace them.
 */
@Module({
  imports: [EgressModule],
  providers: [BrowserPool, { provide: BROWSER_LAUNCHER, useValue: launchChromium }, { provide: SANDBOX_PROBE, useValue: systemProbe }],
  exports: [BrowserPool],
})
export class BrowserModule {}
