import ipaddr from 'ipaddr.js';

/**
 * The key a client's failed sign-ins are counted under (CONTRACT.md, "Dashboard": "an IPv6 client
 * counted by its /64"): an IPv4 address as is (IPv4-mapped IPv6 unwrapped), an IPv6 address as its
 * /64 network (`2001:db8:1:2::/64`), so one host cannot rotate through the addresses of its own
 * network. Anything unparseable is kept as given (at most 64 characters).
 */
export function signInClientKey(ip: string): string {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.process(ip.replace(/%.*$/, ''));
  } catch {
    return ip.slice(0, 64);
  }
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4);
  return `${new ipaddr.IPv6([...parts, 0, 0, 0, 0])
    .toNormalizedString()
    .split(':')
    .slice(0, 4)
    .map((p) => p.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}
