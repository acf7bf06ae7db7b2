import { blockedAddressReason } from './address-policy';

/** CONTRACT.md, "SSRF guard": IPv4-compatible (::/96) and NAT64 (64:ff9b::/96) forms of blocked IPv4 ranges are blocked. */
describe('blockedAddressReason: IPv6 forms embedding an IPv4 address', () => {
  it.each([
    ['::7f00:1', 'loopback'],
    ['::a00:1', 'private'],
    ['::c0a8:101', 'private'],
    ['::a9fe:a9fe', 'linkLocal'],
    ['::6440:1', 'carrierGradeNat'],
    ['[::a00:1]', 'private'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b::a00:1', 'private'],
    ['64:ff9b::a9fe:a9fe', 'linkLocal'],
    ['64:ff9b::6440:1', 'carrierGradeNat'],
    ['64:ff9b::ac10:1', 'private'],
  ])('blocks %s as %s (the embedded IPv4 address’s kind)', (address, reason) => {
    expect(blockedAddressReason(address)).toBe(reason);
  });

  it('blocks the deprecated IPv4-compatible and the NAT64 forms of public addresses too, and keeps :: and ::1 as they are', () => {
    expect(blockedAddressReason('::808:808')).toBe('ipv4Compatible');
    expect(blockedAddressReason('64:ff9b::808:808')).toBe('rfc6052');
    expect(blockedAddressReason('::')).toBe('unspecified');
    expect(blockedAddressReason('::1')).toBe('loopback');
  });

  it('still allows ordinary public IPv6 addresses', () => {
    expect(blockedAddressReason('2606:4700:4700::1111')).toBeNull();
    expect(blockedAddressReason('2001:db9::7f00:1')).toBeNull();
  });
});
