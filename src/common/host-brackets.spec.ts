import { withoutBrackets } from './host-brackets';

describe('withoutBrackets', () => {
  it('strips the brackets of an IPv6 literal and leaves other hosts as they are', () => {
    expect(withoutBrackets('[::1]')).toBe('::1');
    expect(withoutBrackets('[fe80::1%25eth0]')).toBe('fe80::1%25eth0');
    expect(withoutBrackets('::1')).toBe('::1');
    expect(withoutBrackets('127.0.0.1')).toBe('127.0.0.1');
    expect(withoutBrackets('example.com')).toBe('example.com');
  });

  it('removes a lone leading or trailing bracket, and only at the ends', () => {
    expect(withoutBrackets('[::1')).toBe('::1');
    expect(withoutBrackets('::1]')).toBe('::1');
    expect(withoutBrackets('a[b]c')).toBe('a[b]c');
  });
});
