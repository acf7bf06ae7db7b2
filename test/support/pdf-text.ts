import { constants, inflateSync } from 'node:zlib';

/** The decompressed streams of a PDF (FlateDecode ones; others as stored). */
function pdfStreams(pdf: Buffer): string[] {
  const s = pdf.toString('latin1');
  const streams: string[] = [];
  const re = /(?<!end)stream\r?\n/g;
  for (let m = re.exec(s); m; m = re.exec(s)) {
    const start = m.index + m[0].length;
    const end = s.indexOf('endstream', start);
    if (end < 0) break;
    const raw = Buffer.from(s.slice(start, end), 'latin1');
    try {
      streams.push(inflateSync(raw, { finishFlush: constants.Z_SYNC_FLUSH }).toString('latin1'));
    } catch {
      streams.push(raw.toString('latin1'));
    }
    re.lastIndex = end;
  }
  return streams;
}

/** Number of pages of a PDF (its `/Type /Page` objects; Chromium writes no object streams). */
export function pdfPageCount(pdf: Buffer): number {
  return (pdf.toString('latin1').match(/\/Type\s*\/Page\b(?!s)/g) ?? []).length;
}

/**
 * The text of each content stream of a PDF as Chromium (Skia) writes it: hex glyph strings (`<0025> Tj`)
 * mapped to Unicode through the fonts' ToUnicode CMaps (all fonts' maps merged: enough for test pages
 * in one font). A test helper, not a PDF parser.
 */
export function pdfTexts(pdf: Buffer): string[] {
  const streams = pdfStreams(pdf);
  const map = new Map<number, string>();
  const hexText = (hex: string) => String.fromCodePoint(...(hex.match(/.{4}/g) ?? []).map((h) => parseInt(h, 16)));
  for (const cmap of streams.filter((s) => s.includes('begincmap'))) {
    for (const block of cmap.match(/beginbfchar([\s\S]*?)endbfchar/g) ?? [])
      for (const [, from, to] of block.matchAll(/<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>/g)) map.set(parseInt(from, 16), hexText(to));
    for (const block of cmap.match(/beginbfrange([\s\S]*?)endbfrange/g) ?? [])
      for (const [, lo, hi, to] of block.matchAll(/<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>/g))
        for (let g = parseInt(lo, 16); g <= parseInt(hi, 16); g++)
          map.set(g, String.fromCodePoint(parseInt(to, 16) + g - parseInt(lo, 16)));
  }
  return streams
    .filter((s) => /\bTj\b|\bTJ\b/.test(s) && !s.includes('begincmap'))
    .map((s) =>
      [...s.matchAll(/<([0-9A-Fa-f]+)>\s*Tj/g)]
        .map(([, hex]) => (hex.match(/.{4}/g) ?? []).map((g) => map.get(parseInt(g, 16)) ?? '').join(''))
        .join(''),
    );
}
