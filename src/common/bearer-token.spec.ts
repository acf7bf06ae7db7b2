import { bearerToken } from './bearer-token';

describe('bearerToken', () => {
  it('reads the token of a Bearer header, any case of the scheme, spaces or tabs around the token', () => {
    expect(bearerToken('Bearer sk_live_abc')).toBe('sk_live_abc');
    expect(bearerToken('bearer\tsk_live_abc \t')).toBe('sk_live_abc');
    expect(bearerToken('BEARER   tok')).toBe('tok');
  });

  it('is null for a missing header, another scheme, no token or two words', () => {
    expect(bearerToken(undefined)).toBeNull();
    expect(bearerToken('')).toBeNull();
    expect(bearerToken('Basic dXNlcjpwYXNz')).toBeNull();
    expect(bearerToken('Bearer')).toBeNull();
    expect(bearerToken('Bearer ')).toBeNull();
    expect(bearerToken('Bearer a b')).toBeNull();
    expect(bearerToken('Bearersk_live_abc')).toBeNull();
  });
});
