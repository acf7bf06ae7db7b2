import { rateLimitHeaders } from './rate-limit-headers';

describe('rateLimitHeaders', () => {
  const resetAt = new Date('2027-01-01T00:00:00.000Z');

  it('gives limit, remaining and the reset in Unix seconds, without a policy for current plans', () => {
    expect(rateLimitHeaders({ plan: 'starter', limit: 2000, used: 10, remaining: 1990, resetAt })).toEqual({
      'X-RateLimit-Limit': '2000',
      'X-RateLimit-Remaining': '1990',
      'X-RateLimit-Reset': '1798761600',
    });
  });

  it('marks legacy_free keys as grandfathered', () => {
    expect(rateLimitHeaders({ plan: 'legacy_free', limit: 1000, used: 1000, remaining: 0, resetAt })).toMatchObject({
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Policy': 'legacy-free-grandfathered',
    });
  });
});
