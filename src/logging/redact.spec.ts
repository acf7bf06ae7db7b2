import { redactSecrets } from './redact';

describe('redactSecrets', () => {
  it('removes API key secrets, webhook secrets and MCP path keys wherever they appear', () => {
    const line = JSON.stringify({
      msg: 'POST /mcp/sk_live_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcd failed',
      err: 'Error: bad whsec_Yb3kQ2nP8vXw1tR6mL0sA9dF4gH7jK5cZ2xV8bN1mQ0=\n    at x',
      url: '/mcp/not-even-a-key?x=1',
    });
    const out = redactSecrets(line);
    expect(out).not.toMatch(/sk_live_[A-Za-z0-9]/);
    expect(out).not.toMatch(/whsec_[A-Za-z0-9]/);
    expect(out).not.toContain('not-even-a-key');
    expect(out).toContain('/mcp/[REDACTED]?x=1');
    expect(JSON.parse(out).err).toBe('Error: bad whsec_[REDACTED]\n    at x');
  });

  it('leaves other text alone', () => {
    expect(redactSecrets('GET /v1/screenshot/scr_123 200 /mcp')).toBe('GET /v1/screenshot/scr_123 200 /mcp');
  });
});
