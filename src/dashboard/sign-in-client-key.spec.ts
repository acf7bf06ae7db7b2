import { signInClientKey } from './sign-in-client-key';

describe('signInClientKey (CONTRACT.md, "Dashboard": IPv6 clients counted by their /64)', () => {
  it('keeps an IPv4 address and unwraps an IPv4-mapped IPv6 one', () => {
    expect(signInClientKey('203.0.113.9')).toBe('203.0.113.9');
    expect(signInClientKey('::ffff:127.0.0.1')).toBe('127.0.0.1');
  });

  it('counts every address of one IPv6 /64 under one key, and different /64s apart', () => {
    const a = signInClientKey('2001:db8:1:2::1');
    expect(a).toBe('2001:db8:1:2::/64');
    expect(signInClientKey('2001:0db8:0001:0002:ffff:eeee:dddd:cccc')).toBe(a);
    expect(signInClientKey('2001:db8:1:3::1')).not.toBe(a);
    expect(signInClientKey('::1')).toBe('0:0:0:0::/64');
  });

  it('keeps an unparseable value as given, bounded', () => {
    expect(signInClientKey('unknown')).toBe('unknown');
    expect(signInClientKey('x'.repeat(100))).toHaveLength(64);
  });
});
