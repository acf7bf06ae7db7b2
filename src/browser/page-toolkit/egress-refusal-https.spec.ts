import { EGRESS_ERROR_HEADER } from '../../egress/egress-proxy';
import { egressRefusal } from './egress-failures';

describe('egressRefusal: only the proxy’s own plain-HTTP answers', () => {
  it('counts the header as a refusal on http, never on https (the site’s own answer through a tunnel)', () => {
    const response = (url: string) => ({ url: () => url, headers: () => ({ [EGRESS_ERROR_HEADER]: 'Target not allowed: x' }) });
    expect(egressRefusal(response('http://a.test/'))).toBe('Target not allowed: x');
    expect(egressRefusal(response('https://a.test/'))).toBeUndefined();
    expect(egressRefusal(null)).toBeUndefined();
  });
});
