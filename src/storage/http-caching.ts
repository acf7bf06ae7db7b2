import type { IncomingHttpHeaders } from 'node:http';
import parseRange from 'range-parser';
import type { ByteRange } from './result-storage';

/** How to answer a GET of a stored representation given its conditional and range headers. */
export type ConditionalAnswer = { status: 200 } | { status: 304 } | { status: 416 } | { status: 206; range: ByteRange };

/**
 * RFC 9110 sections 13.1.2 (`If-None-Match`: weak comparison, `*`), 13.1.5 (`If-Range`: strong
 * comparison with the entity tag) and 14.2 (`Range`, parsed with `range-parser`): 304 when the
 * client's copy is current; 206 for one satisfiable byte range; 416 when none is satisfiable; 200
 * otherwise (no or malformed `Range`, several ranges, a stale `If-Range`). `size` in bytes; `etag`
 * quoted.
 */
export function conditionalAnswer(headers: IncomingHttpHeaders, size: number, etag: string): ConditionalAnswer {
  const ifNoneMatch = headers['if-none-match'];
  if (ifNoneMatch) {
    const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
    const tags = ifNoneMatch.split(',').map(opaque);
    if (tags.includes('*') || tags.includes(opaque(etag))) return { status: 304 };
  }
  const rangeHeader = headers.range;
  if (!rangeHeader) return { status: 200 };
  const ifRange = headers['if-range'];
  if (ifRange && String(ifRange).trim() !== etag) return { status: 200 };
  const ranges = parseRange(size, rangeHeader, { combine: true });
  if (ranges === -1) return { status: 416 };
  if (ranges === -2 || ranges.type !== 'bytes' || ranges.length !== 1) return { status: 200 };
  return { status: 206, range: { start: ranges[0].start, end: ranges[0].end } };
}
