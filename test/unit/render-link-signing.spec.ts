import { signRenderUrl } from '../../openapi/sdk-typescript/src/render-links';
import { canonicalQuery, parseRawQuery, renderSignature, signaturesMatch } from '../../src/render/render-signature';

/** The SDK's signRenderUrl() and the server's verifier agree (docs/CONTRACT.md, "Render links"). */
describe('signRenderUrl (SDK) against the server verifier', () => {
  const secret = 'rks_Jd0aZxY2mNw8PqRs4kq1Jd0aZxY2mNw8PqRs4kq1';

  it.each([
    [{ url: 'https://example.com/a b?x=1&y=ü', format: 'png' as const }],
    [
      {
        url: 'https://example.com',
        format: 'webp' as const,
        width: 1200,
        height: 630,
        fullPage: false,
        hideSelectors: ['#cookie', '.ad'],
        headers: { 'X-Token': "it's" },
      },
    ],
    [{ url: 'https://example.com/~x', format: 'pdf' as const, pdf: { paper: 'A4' }, expiresAt: new Date('2030-01-01T00:00:00Z') }],
  ])('signs %j so that the server accepts it', async (input) => {
    const link = new URL(
      await signRenderUrl({ baseUrl: 'https://glimpse.example.com/', renderKeyId: 'rk_4fQx9LmZ2pRt7YvB1nKc3sDw', secret, ...input }),
    );
    expect(link.pathname).toBe(`/v1/render/rk_4fQx9LmZ2pRt7YvB1nKc3sDw.${input.format}`);
    const params = parseRawQuery(link.search.slice(1))!;
    const given = params.find(([name]) => name === 'signature')![1];
    expect(given).toMatch(/^[0-9a-f]{64}$/);
    expect(signaturesMatch(given, renderSignature(secret, link.pathname, canonicalQuery(params)))).toBe(true);
    expect(signaturesMatch(given, renderSignature('rks_other', link.pathname, canonicalQuery(params)))).toBe(false);
    expect(params.find(([name]) => name === 'url')![1]).toBe(input.url);
    if ('expiresAt' in input) expect(params.find(([name]) => name === 'expires')![1]).toBe('1893456000');
    if ('hideSelectors' in input) expect(JSON.parse(params.find(([name]) => name === 'hideSelectors')![1])).toEqual(input.hideSelectors);
  });
});

describe('glimpse render-url (CLI)', () => {
  it('prints a link the server verifier accepts, with the capture options', async () => {
    const { main } = await import('../../openapi/sdk-typescript/src/cli');
    let out = '';
    const stdout = { write: (s: string) => ((out += s), true) } as unknown as NodeJS.WritableStream;
    const secret = 'rks_Jd0aZxY2mNw8PqRs4kq1Jd0aZxY2mNw8PqRs4kq1';
    const code = await main(
      [
        '--base-url',
        'https://glimpse.example.com',
        'render-url',
        'https://example.com',
        '--render-key',
        'rk_4fQx9LmZ2pRt7YvB1nKc3sDw',
        '--secret',
        secret,
        '--format',
        'jpeg',
        '--width',
        '800',
        '--expires-in',
        '3600',
      ],
      { stdout, stderr: stdout },
    );
    expect(code).toBe(0);
    const link = new URL(out.trim());
    expect(link.pathname).toBe('/v1/render/rk_4fQx9LmZ2pRt7YvB1nKc3sDw.jpeg');
    const params = parseRawQuery(link.search.slice(1))!;
    expect(params.find(([n]) => n === 'width')![1]).toBe('800');
    const given = params.find(([n]) => n === 'signature')![1];
    expect(signaturesMatch(given, renderSignature(secret, link.pathname, canonicalQuery(params)))).toBe(true);
  });
});
