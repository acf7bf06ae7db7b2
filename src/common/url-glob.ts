/**
 * Customer globs over URLs (CONTRACT.md, "Tenancy: fair share and isolation": no input runs
 * super-linear on a worker; "Capture options, second set": `blockUrls`; "Browser session runs":
 * `waitForUrl`; "Crawls": `include`/`exclude`). One syntax: `*` matches any characters (none included,
 * `/` included), every other character matches itself; the glob covers the whole string.
 *
 * A customer string never becomes a regular expression: a regular expression with many `.*` backtracks
 * (`*a*a*a*a*a*a*a*aZ` against 74 `a`s took 51 s of one event loop). The matcher splits the glob at its
 * stars into literal pieces: the first must start the string, the last must end it, and each piece
 * between is found at its leftmost place after the previous one (Knuth–Morris–Pratt), which is right
 * for globs whose only wildcard is `*`. Each character of the string is looked at a bounded number of
 * times: time O(string length + glob length), memory O(glob length), whatever the input.
 */

/** A compiled glob: whether `text` (a whole URL, or the part of it the caller matches) matches. */
export type GlobMatcher = (text: string) => boolean;

/**
 * Compiles `glob` (`*` any characters, everything else literal, anchored at both ends) into a
 * {@link GlobMatcher} that runs in time linear in the text's length plus the glob's. Compile once, match
 * many times (the blockers match every request of a page). Never throws.
 */
export function compileGlob(glob: string): GlobMatcher {
  const pieces = glob.split('*');
  if (pieces.length === 1) return (text) => text === glob;
  const head = pieces[0];
  const tail = pieces[pieces.length - 1];
  const middle = pieces
    .slice(1, -1)
    .filter((piece) => piece.length > 0)
    .map((piece) => ({ piece, fallback: failureTable(piece) }));
  const fixed = head.length + tail.length;
  return (text) => {
    if (text.length < fixed || !text.startsWith(head) || !text.endsWith(tail)) return false;
    let from = head.length;
    const end = text.length - tail.length;
    for (const { piece, fallback } of middle) {
      const found = indexWithin(text, from, end, piece, fallback);
      if (found < 0) return false;
      from = found + piece.length;
    }
    return true;
  };
}

/** Whether `text` matches `glob` ({@link compileGlob}); compile once instead when matching many texts. */
export function globMatches(glob: string, text: string): boolean {
  return compileGlob(glob)(text);
}

/**
 * Knuth–Morris–Pratt failure table of `piece`: entry i is the length of the longest proper prefix of
 * `piece[0..i]` that is also its suffix.
 */
function failureTable(piece: string): Int32Array {
  const table = new Int32Array(piece.length);
  let k = 0;
  for (let i = 1; i < piece.length; i++) {
    while (k > 0 && piece.charCodeAt(i) !== piece.charCodeAt(k)) k = table[k - 1];
    if (piece.charCodeAt(i) === piece.charCodeAt(k)) k++;
    table[i] = k;
  }
  return table;
}

/**
 * Index of the leftmost occurrence of `piece` in `text` that starts at or after `from` and ends at or
 * before `end`, or -1; reads each character of `text[from, end)` once (amortised), as Knuth–Morris–Pratt.
 */
function indexWithin(text: string, from: number, end: number, piece: string, fallback: Int32Array): number {
  let k = 0;
  for (let i = from; i < end; i++) {
    const c = text.charCodeAt(i);
    while (k > 0 && c !== piece.charCodeAt(k)) k = fallback[k - 1];
    if (c === piece.charCodeAt(k)) k++;
    if (k === piece.length) return i - piece.length + 1;
  }
  return -1;
}
