import { EGRESS_ERROR_HEADER } from '../../egress/egress-proxy';
import { egressRefusal, proxyFailureFor, targetOf } from './egress-failures';

describe('the egress proxy’s reasons', () => {
  const recorded = new Map([
    ['10.0.0.1:443', 'Target not allowed: 10.0.0.1 resolves to 10.0.0.1 (private)'],
    ['internal.test:8443', 'Target not allowed: internal.test resolves to 127.0.0.1 (loopback)'],
  ]);
  const lookup = { recentFailure: (host: string, port: number) => recorded.get(`${host}:${port}`) };

  it('dials the default port of the scheme unless the URL names one', () => {
    expect(targetOf('https://10.0.0.1/a')).toEqual({ host: '10.0.0.1', port: 443 });
    expect(targetOf('http://example.com/')).toEqual({ host: 'example.com', port: 80 });
    expect(targetOf('https://internal.test:8443/x')).toEqual({ host: 'internal.test', port: 8443 });
    expect(targetOf('not a url')).toBeNull();
  });

  it('looks a refused https tunnel up, and only that', () => {
    expect(proxyFailureFor(lookup, 'https://10.0.0.1/a', 'net::ERR_TUNNEL_CONNECTION_FAILED')).toBe(recorded.get('10.0.0.1:443'));
    expect(proxyFailureFor(lookup, 'https://internal.test:8443/', 'net::ERR_TUNNEL_CONNECTION_FAILED')).toBe(
      recorded.get('internal.test:8443'),
    );
    expect(proxyFailureFor(lookup, 'https://10.0.0.1/a', 'net::ERR_CONNECTION_REFUSED')).toBeUndefined();
    expect(proxyFailureFor(lookup, 'https://example.com/', 'net::ERR_TUNNEL_CONNECTION_FAILED')).toBeUndefined();
    expect(proxyFailureFor(undefined, 'https://10.0.0.1/a', 'net::ERR_TUNNEL_CONNECTION_FAILED')).toBeUndefined();
    expect(proxyFailureFor(lookup, '::', 'net::ERR_TUNNEL_CONNECTION_FAILED')).toBeUndefined();
  });

  it('reads the refusal the proxy wrote into its own answer to a plain-http request', () => {
    const answer = (headers: Record<string, string>) => ({ headers: () => headers });
    expect(egressRefusal(answer({ [EGRESS_ERROR_HEADER]: 'Target not allowed: 127.0.0.1 resolves to 127.0.0.1 (loopback)' }))).toBe(
      'Target not allowed: 127.0.0.1 resolves to 127.0.0.1 (loopback)',
    );
    expect(egressRefusal(answer({ 'content-type': 'text/html' }))).toBeUndefined();
    expect(egressRefusal(null)).toBeUndefined();
  });
});
