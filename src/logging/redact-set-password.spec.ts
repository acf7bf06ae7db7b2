import { redactSecrets } from './redact';

describe('redactSecrets: set-password links', () => {
  it('replaces the token of a set-password path, in messages and URLs, and leaves the route pattern alone', () => {
    const token = 'Zx9_-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789ab';
    const line = JSON.stringify({
      msg: `POST /dashboard/set-password/${token} failed`,
      req: { url: `/dashboard/set-password/${token}?x=1` },
    });
    const out = redactSecrets(line);
    expect(out).not.toContain(token);
    expect(out).toContain('/dashboard/set-password/[REDACTED] failed');
    expect(out).toContain('/dashboard/set-password/[REDACTED]?x=1');
    expect(redactSecrets('route /dashboard/set-password/:token')).toBe('route /dashboard/set-password/:token');
  });
});
