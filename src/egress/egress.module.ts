import { Module } from '@nestjs/common';
import { AddressPolicy } from './address-policy';
import { EgressProxy } from './egress-proxy';
import { HostResolver, SystemHostResolver } from './host-resolver';
import { SsrfGuard } from './ssrf-guard';

/**
 * Everything the service connects to on a customer's behalf goes through here (CONTRACT.md, "SSRF
 * guard"): the {@link AddressPolicy}, the {@link SsrfGuard} with its one resolve-and-check routine, the
 * {@link EgressProxy} every browser context uses, and the {@link HostResolver} (replaceable in tests).
 * Used by capture (through the browser pool), webhook deliveries and browser session runs.
 */
@Module({
  providers: [{ provide: HostResolver, useClass: SystemHostResolver }, AddressPolicy, SsrfGuard, EgressProxy],
  exports: [SsrfGuard, EgressProxy, AddressPolicy, HostResolver],
})
export class EgressModule {}
