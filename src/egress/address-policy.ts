import { Inject, Injectable } from '@nestjs/common';
import ipaddr from 'ipaddr.js';
import { APP_CONFIG, AppConfig } from '../config/app-config';

/**
 * Why an address may not be connected to, or null when it is an ordinary public unicast address.
 *
 * Blocks everything that is not global unicast (CONTRACT.md, "SSRF guard"): loopback, RFC 1918,
 * link-local 169.254.0.0/16 (cloud metadata), CGNAT 100.64.0.0/10, `0.0.0.0/8`, multicast, broadcast,
 * reserved and benchmarking ranges; IPv6 loopback, unspecified, unique-local fc00::/7, link-local
 * fe80::/10, multicast, and IPv6 forms that embed an IPv4 address (IPv4-mapped ::ffff:0:0/96, NAT64,
 * 6to4, Teredo), which are judged by the embedded IPv4 address when it can be extracted.
 * An unparseable string is blocked.
 */
export function blockedAddressReason(address: string): string | null {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  } catch {
    return 'not an IP address';
  }
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  const range = parsed.range();
  return range === 'unicast' ? null : range;
}

/**
 * The address rule the SSRF guard and the egress proxy apply to every address before connecting:
 * {@link blockedAddressReason}, lifted entirely when `SSRF_ALLOW_PRIVATE=true` (CONTRACT.md,
 * "SSRF guard"). A provider, so tests can replace it (for example to treat one loopback address as
 * public) while every request still takes the same path through the guard and the proxy.
 */
@Injectable()
export class AddressPolicy {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  /** Why `address` (an IPv4 or IPv6 literal) may not be connected to, or null when it may. */
  blockedReason(address: string): string | null {
    if (this.config.ssrfAllowPrivate) return null;
    return blockedAddressReason(address);
  }
}
