import { withoutBrackets } from './host-brackets';

describe('withoutBrackets', () => {
  it('strips the brackets of an IPv6 literal and leaves names, IPv4 and bare IPv6 literals as they are', () => {
    const hosts = ['[::1]', '[fe80::1%25eth0]', '::1', '127.0.0.1', 'example.com'];
    expect(hosts.map(withoutBrackets)).toEqual(['::1', 'fe80::1%25eth0', '::1', '127.0.0.1', 'example.com']);
  });

  it('removes a lone leading or trailing bracket, and only at the ends', () => {
    expect(['[::1', '::1]', 'a[b]c'].map(withoutBrackets)).toEqual(['::1', '::1', 'a[b]c']);
  });
});
