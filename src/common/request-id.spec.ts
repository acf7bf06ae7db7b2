import { isId, newId } from './ids';
import { resolveRequestId } from './request-id';

describe('resolveRequestId (spec section 7.1)', () => {
  it('echoes ids matching [A-Za-z0-9_-]{8,64}', () => {
    expect(resolveRequestId('abcd_EF-12')).toBe('abcd_EF-12');
    expect(resolveRequestId('x'.repeat(64))).toBe('x'.repeat(64));
  });
  it.each([undefined, '', 'short', 'x'.repeat(65), 'with space', 'semi;colon'])('replaces %j with req_<random>', (incoming) => {
    expect(resolveRequestId(incoming)).toMatch(/^req_[0-9A-Za-z]{20}$/);
  });
});

describe('ids (CONTRACT.md, Identifiers)', () => {
  it('have the type prefix and 24 base62 characters, and are unique', () => {
    const ids = new Set(Array.from({ length: 1000 }, () => newId('screenshot')));
    expect(ids.size).toBe(1000);
    for (const id of ids) expect(isId('screenshot', id)).toBe(true);
    expect(newId('delivery')).toMatch(/^dlv_[0-9A-Za-z]{24}$/);
  });
  it('rejects other shapes', () => {
    expect(isId('screenshot', newId('account'))).toBe(false);
    expect(isId('screenshot', 'scr_short')).toBe(false);
    expect(isId('screenshot', `scr_${'a'.repeat(23)}!`)).toBe(false);
  });
});
