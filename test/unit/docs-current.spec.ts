import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { CAPTURE_OPTION_NAMES } from '../../src/capture/capture-options';

const root = join(__dirname, '../..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');

/** Every file under `dir` (repository-relative paths), recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((name) => {
    const path = join(dir, name);
    return statSync(join(root, path)).isDirectory() ? filesUnder(path) : [path];
  });
}

/** The pages the README must reach: every Markdown page of docs/. */
const DOC_PAGES = readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md'));

/** Copies of the shared originals (docs/development.md): never edited here, so never scanned. */
const SHARED_COPIES = ['docs/SPEC.md', 'docs/CONTRACT.md', 'docs/ARCHITECTURE.md'];

/**
 * Words about how the code was written rather than what it does, which comments and docs never carry
 * (docs/development.md, "Lint and format": comments cite docs/): a cited rule names its docs/ page and
 * section, a figure its method and command (docs/performance.md, docs/testing.md).
 */
const WORK_WORDS: Array<{ pattern: RegExp; why: string }> = [
  { pattern: /\bBRIEF\b/, why: 'cites a work brief instead of a docs/ page' },
  { pattern: /\bfinding \d+/i, why: 'names a finding of a review instead of what is checked' },
  {
    pattern: /\bother sessions (?:running|used)\b|\bshared with (?:\w+ )?other sessions\b|\banother session's\b/i,
    why: 'describes who else used the machine',
  },
];

describe('README and docs say what is true now', () => {
  const readme = read('README.md');

  it('the README links every page of docs/', () => {
    const linked = new Set([...readme.matchAll(/\]\(docs\/([^)#\s]+\.md)/g)].map((m) => m[1]));
    expect(DOC_PAGES.filter((page) => !linked.has(page))).toEqual([]);
  });

  it('the README gives the number of capture options of the options table (src/capture/capture-options.ts)', () => {
    const stated = /(\d+) options\s+besides `url`/.exec(readme);
    expect(stated).not.toBeNull();
    expect(Number(stated![1])).toBe(CAPTURE_OPTION_NAMES.length);
  });

  it('the README names every feature: render links, Prefer: wait, extraction, monitors, storage destinations, runs, batches, uploads, PDF', () => {
    for (const name of [
      'Render links',
      'Prefer: wait',
      'Extracted content',
      'Monitors',
      'Storage destinations',
      'runs',
      'batch',
      'upload',
      'PDF',
    ])
      expect(readme).toContain(name);
  });

  it('comments and docs carry no words about how the work was done', () => {
    const self = relative(root, __filename);
    const files = ['README.md', ...['src', 'docs', 'test', 'bench', 'scripts'].flatMap(filesUnder)]
      .filter((f) => /\.(ts|js|cjs|mjs|sh|md|eta)$/.test(f))
      .filter((f) => f !== self && !SHARED_COPIES.includes(f));
    const hits = files.flatMap((file) =>
      read(file)
        .split('\n')
        .flatMap((line, i) => WORK_WORDS.filter(({ pattern }) => pattern.test(line)).map(({ why }) => `${file}:${i + 1}: ${why}`)),
    );
    expect(hits).toEqual([]);
  });

  it('docs/testing.md and docs/performance.md hold no dated measurement diaries', () => {
    for (const page of ['docs/testing.md', 'docs/performance.md']) {
      const dated = read(page)
        .split('\n')
        .filter((line) => /\b20\d\d-\d\d-\d\d\b/.test(line));
      expect({ page, dated }).toEqual({ page, dated: [] });
    }
  });
});
