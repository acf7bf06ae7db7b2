import { Inject, Injectable } from '@nestjs/common';
import ipaddr from 'ipaddr.js';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { withoutBrackets } from '../common/host-brackets';

/**
 * Why an address may not be connected to, or null when it is an ordinary public unicast address.
 *
 * Blocks everything that is not global unicast (CONTRACT.md, "SSRF guard"): loopback, RFC 1918,
 * link-local 169.254.0.0/16 (cloud metadata), CGNAT 100.64.0.0/10, `0.0.0.0/8`, multicast, broadcast,
 * reserved and benchmarking ranges; IPv6 loopback, unspecified, unique-local fc00::/7, link-local
 * fe80::/10, multicast, and IPv6 forms that embed an IPv4 address: IPv4-mapped ::ffff:0:0/96 is judged
 * by its IPv4 address; IPv4-compatible ::/96 and NAT64 64:ff9b::/96 are always blocked, with the
 * embedded IPv4 address's kind when that is blocked (`::7f00:1` is `loopback`), else `ipv4Compatible`
 * or `rfc6052`; 6to4 and Teredo are blocked. An unparseable string is blocked.
 */
export function blockedAddressReason(address: string): string | null {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(withoutBrackets(address).replace(/%.*$/, ''));
  } catch {
    return 'not an IP address';
  }
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) {
      parsed = v6.toIPv4Address();
    } else {
      const embedding = ipv4Embedding(v6.parts);
      if (embedding) {
        const [hi, lo] = [v6.parts[6], v6.parts[7]];
        const inner = new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]).range();
        return inner === 'unicast' ? embedding : inner;
      }
    }
  }
  const range = parsed.range();
  return range === 'unicast' ? null : range;
}

/**
 * `ipv4Compatible` for ::/96 (but `::` and `::1`, which are unspecified and loopback) and `rfc6052`
 * for the NAT64 prefix 64:ff9b::/96: the two IPv6 forms whose last 32 bits are an IPv4 address the
 * host or a NAT64 gateway may reach. Null for any other address.
 */
function ipv4Embedding(parts: number[]): 'ipv4Compatible' | 'rfc6052' | null {
  const zeros = (from: number, to: number) => parts.slice(from, to).every((p) => p === 0);
  if (zeros(0, 6) && !(parts[6] === 0 && parts[7] <= 1)) return 'ipv4Compatible';
  if (parts[0] === 0x64 && parts[1] === 0xff9b && zeros(2, 6)) return 'rfc6052';
  return null;
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
