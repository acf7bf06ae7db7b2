import { conditionalAnswer } from './http-caching';

const etag = '"abc-123"';

describe('conditionalAnswer (RFC 9110 conditional and range requests)', () => {
  it('answers 304 to a matching If-None-Match, weak or strong, in a list, or *', () => {
    expect(conditionalAnswer({ 'if-none-match': etag }, 100, etag)).toEqual({ status: 304 });
    expect(conditionalAnswer({ 'if-none-match': `"other", W/${etag}` }, 100, etag)).toEqual({ status: 304 });
    expect(conditionalAnswer({ 'if-none-match': '*' }, 100, etag)).toEqual({ status: 304 });
    expect(conditionalAnswer({ 'if-none-match': '"other"' }, 100, etag)).toEqual({ status: 200 });
  });

  it('answers 206 with an inclusive range for one satisfiable range, suffix and open ranges included', () => {
    expect(conditionalAnswer({ range: 'bytes=0-9' }, 100, etag)).toEqual({ status: 206, range: { start: 0, end: 9 } });
    expect(conditionalAnswer({ range: 'bytes=-10' }, 100, etag)).toEqual({ status: 206, range: { start: 90, end: 99 } });
    expect(conditionalAnswer({ range: 'bytes=95-' }, 100, etag)).toEqual({ status: 206, range: { start: 95, end: 99 } });
    expect(conditionalAnswer({ range: 'bytes=90-500' }, 100, etag)).toEqual({ status: 206, range: { start: 90, end: 99 } });
  });

  it('answers 416 when no range is satisfiable, 200 for malformed, multiple or stale If-Range requests', () => {
    expect(conditionalAnswer({ range: 'bytes=100-200' }, 100, etag)).toEqual({ status: 416 });
    expect(conditionalAnswer({ range: 'pages=1-2' }, 100, etag)).toEqual({ status: 200 });
    expect(conditionalAnswer({ range: 'bytes=oops' }, 100, etag)).toEqual({ status: 200 });
    expect(conditionalAnswer({ range: 'bytes=0-1,50-60' }, 100, etag)).toEqual({ status: 200 });
    expect(conditionalAnswer({ range: 'bytes=0-1', 'if-range': '"old"' }, 100, etag)).toEqual({ status: 200 });
    expect(conditionalAnswer({ range: 'bytes=0-1', 'if-range': etag }, 100, etag)).toEqual({ status: 206, range: { start: 0, end: 1 } });
  });
});
