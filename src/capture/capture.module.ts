import { Module } from '@nestjs/common';
import { AddressPolicy } from './address-policy';
import { CaptureEngine } from './capture-engine';
import { EgressProxy } from './egress-proxy';
import { SsrfGuard } from './ssrf-guard';

@Module({
  providers: [AddressPolicy, SsrfGuard, EgressProxy, CaptureEngine],
  exports: [CaptureEngine, SsrfGuard, AddressPolicy],
})
export class CaptureModule {}
