import fc from 'fast-check';
import { compileGlob, globMatches } from './url-glob';

/** The reference: dynamic programming over (glob prefix, text prefix), obviously right and O(n·m). */
function reference(glob: string, text: string): boolean {
  let row = new Array<boolean>(text.length + 1).fill(false);
  row[0] = true;
  for (const g of glob) {
    const next = new Array<boolean>(text.length + 1).fill(false);
    next[0] = g === '*' && row[0];
    for (let j = 1; j <= text.length; j++) next[j] = g === '*' ? row[j] || next[j - 1] : row[j - 1] && text[j - 1] === g;
    row = next;
  }
  return row[text.length];
}

/** The old way, a regular expression (fine on these small inputs). */
function asRegExp(glob: string): RegExp {
  return new RegExp(
    `^${glob
      .split('*')
      .map((part) => part.replace(/[.+?^${}()|[\]\\/-]/g, '\\$&'))
      .join('.*')}$`,
    's',
  );
}

describe('compileGlob (CONTRACT.md "Tenancy": customer globs match in linear time)', () => {
  it.each([
    ['*.png', 'http://127.0.0.1:8080/a/b.png', true],
    ['*.png', 'http://127.0.0.1:8080/a/b.png?x=1', false],
    ['*/ads/*', 'https://example.com/ads/banner.js', true],
    ['*://cdn.example.com/*', 'https://cdn.example.com/lib.js', true],
    ['*://cdn.example.com/*', 'https://cdn.example.com.evil.test/lib.js', false],
    ['http://a.test/x?y=(1)', 'http://a.test/x?y=(1)', true],
    ['http://a.test/x.js', 'http://a.test/xyjs', false],
    ['*', 'anything at all', true],
    ['*', '', true],
    ['', '', true],
    ['', 'x', false],
    ['a*a', 'a', false],
    ['a*a', 'aa', true],
    ['**/dashboard', 'https://app.test/dashboard', true],
    ['**/welcome?*', 'http://127.0.0.1:1/welcome?user=ann', true],
    ['**/welcome?*', 'http://127.0.0.1:1/welcomeXuser=ann', false],
    ['*[a-z]{2}\\d+*', 'x[a-z]{2}\\d+y', true],
    ['*[a-z]*', 'xay', false],
    ['*abab*', 'xabaabab', true],
    ['*aab*', 'aaab', true],
  ])('%j against %j: %s', (glob, text, matches) => {
    expect(compileGlob(glob)(text)).toBe(matches);
    expect(globMatches(glob, text)).toBe(matches);
  });

  const alphabet = fc.constantFrom('a', 'b', '/', '.', '?', '*');
  const textAlphabet = fc.constantFrom('a', 'b', '/', '.', '?', '*');

  it('agrees with a dynamic-programming reference on random small globs and texts', () => {
    fc.assert(
      fc.property(fc.string({ unit: alphabet, maxLength: 12 }), fc.string({ unit: textAlphabet, maxLength: 20 }), (glob, text) => {
        expect(compileGlob(glob)(text)).toBe(reference(glob, text));
      }),
      { numRuns: 5_000 },
    );
  });

  it('agrees with the regular-expression form on random small globs and texts', () => {
    fc.assert(
      fc.property(fc.string({ unit: alphabet, maxLength: 10 }), fc.string({ unit: textAlphabet, maxLength: 16 }), (glob, text) => {
        expect(compileGlob(glob)(text)).toBe(asRegExp(glob).test(text));
      }),
      { numRuns: 3_000 },
    );
  });

  it('a text built from the glob (each star replaced by random text) always matches', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: fc.constantFrom('a', 'b', '/'), maxLength: 5 }), { minLength: 1, maxLength: 6 }),
        fc.array(fc.string({ unit: textAlphabet, maxLength: 5 }), { minLength: 5, maxLength: 5 }),
        (pieces, fills) => {
          const glob = pieces.join('*');
          const text = pieces.map((piece, i) => (i === 0 ? piece : `${fills[i % fills.length]}${piece}`)).join('');
          expect(compileGlob(glob)(text)).toBe(true);
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it('answers on long texts with many stars (the hostile globs of blockUrls)', () => {
    const match = compileGlob(`*${'a*'.repeat(40)}Z`);
    for (const n of [74, 7_400, 740_000]) expect(match(`http://127.0.0.1/${'a'.repeat(n)}.png`)).toBe(false);
    expect(match(`http://127.0.0.1/${'a'.repeat(100)}Z`)).toBe(true);
  });
});
