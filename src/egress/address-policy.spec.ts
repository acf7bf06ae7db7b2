import { blockedAddressReason } from './address-policy';

describe('blockedAddressReason', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fd00::1', 'uniqueLocal'],
    ['fc12:3456::1', 'uniqueLocal'],
    ['fe80::1', 'linkLocal'],
    ['fe80::1%eth0', 'linkLocal'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['[::ffff:169.254.169.254]', 'linkLocal'],
    ['::ffff:10.1.2.3', 'private'],
  ])('blocks %s (%s)', (address, reason) => {
    expect(blockedAddressReason(address)).toBe(reason);
  });

  it.each(['93.184.215.14', '8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '172.32.0.1', '100.128.0.1'])(
    'allows public unicast %s',
    (address) => {
      expect(blockedAddressReason(address)).toBeNull();
    },
  );

  it('blocks IPv6 forms that embed IPv4 (6to4, Teredo, NAT64)', () => {
    expect(blockedAddressReason('2002:7f00:1::1')).not.toBeNull();
    expect(blockedAddressReason('2001:0:4136:e378:8000:63bf:3fff:fdd2')).not.toBeNull();
    expect(blockedAddressReason('64:ff9b::7f00:1')).not.toBeNull();
  });

  it('blocks what is not an address', () => {
    expect(blockedAddressReason('example.com')).toBe('not an IP address');
  });
});

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
