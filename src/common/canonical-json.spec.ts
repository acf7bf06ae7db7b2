import { canonicalJson } from './canonical-json';

describe('canonicalJson', () => {
  it('sorts object keys at every level and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { z: 1, y: 2 }], c: null } })).toBe('{"a":{"c":null,"d":[2,{"y":2,"z":1}]},"b":1}');
  });

  it('follows JSON.stringify otherwise: undefined members left out, toJSON applied, undefined in arrays as null', () => {
    expect(canonicalJson({ b: undefined, a: new Date('2026-01-02T03:04:05.000Z'), c: [undefined] })).toBe(
      '{"a":"2026-01-02T03:04:05.000Z","c":[null]}',
    );
  });
});
