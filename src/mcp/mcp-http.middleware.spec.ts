import { loadConfig } from '../config/app-config';
import { McpHttpMiddleware, redactMcpPath } from './mcp-http.middleware';

describe('redactMcpPath', () => {
  it('hides the API key of an MCP path and leaves other paths alone', () => {
    expect(redactMcpPath('/mcp/sk_live_abcdefghijklmnopqrstuvwxyz0123456789ABCD')).toBe('/mcp/<redacted>');
    expect(redactMcpPath('/mcp/sk_live_abc/extra')).toBe('/mcp/<redacted>/extra');
    expect(redactMcpPath('/mcp')).toBe('/mcp');
    expect(redactMcpPath('/v1/screenshot')).toBe('/v1/screenshot');
  });
});

describe('MCP_ALLOWED_ORIGINS', () => {
  const middleware = (origins: string) => new McpHttpMiddleware(loadConfig({ MCP_ALLOWED_ORIGINS: origins }));

  it('allows exactly the listed origins, compared in serialized form', () => {
    const m = middleware(' https://App.example.com/ , http://localhost:5173');
    expect(m.isAllowedOrigin('https://app.example.com')).toBe(true);
    expect(m.isAllowedOrigin('https://app.example.com:443')).toBe(true);
    expect(m.isAllowedOrigin('http://localhost:5173')).toBe(true);
    expect(m.isAllowedOrigin('http://app.example.com')).toBe(false);
    expect(m.isAllowedOrigin('https://evil.example')).toBe(false);
    expect(m.isAllowedOrigin('null')).toBe(false);
  });

  it('allows no browser origin by default', () => {
    expect(middleware('').isAllowedOrigin('http://localhost:3000')).toBe(false);
  });

  it('rejects entries that are not bare http(s) origins at start-up', () => {
    expect(() => loadConfig({ MCP_ALLOWED_ORIGINS: 'https://ok.example,https://app.example.com/path' })).toThrow(
      /MCP_ALLOWED_ORIGINS=.*not an origin/,
    );
    expect(() => loadConfig({ MCP_ALLOWED_ORIGINS: 'ftp://files.example' })).toThrow(/MCP_ALLOWED_ORIGINS/);
    expect(() => loadConfig({ MCP_ALLOWED_ORIGINS: '*' })).toThrow(/MCP_ALLOWED_ORIGINS/);
  });
});
