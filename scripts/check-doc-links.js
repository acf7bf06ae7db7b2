#!/usr/bin/env node
/**
 * Checks every relative link of README.md and docs/*.md (docs/development.md, "Lint and format"): the
 * file or directory it names must exist in the repository, and a `#anchor` must name a heading of the
 * target Markdown file (GitHub's anchors: lower case, punctuation dropped, spaces to hyphens, `-1`, `-2`
 * for repeats). Links to other schemes (https:, mailto:) and links inside code are not checked.
 * Prints one line per broken link (`file:line: target: reason`) and exits 1 when there is any.
 * `node scripts/check-doc-links.js [file.md …]` checks the files given instead.
 */
const { existsSync, readFileSync, readdirSync, statSync } = require('node:fs');
const { dirname, join, relative, resolve } = require('node:path');

const ROOT = resolve(__dirname, '..');

/** Markdown lines with fenced code blocks blanked out (line numbers kept). */
function proseLines(text) {
  let fence = null;
  return text.split('\n').map((line) => {
    const m = /^\s*(`{3,}|~{3,})/.exec(line);
    if (m) {
      if (fence === null) fence = m[1][0];
      else if (m[1][0] === fence) fence = null;
      return '';
    }
    return fence === null ? line : '';
  });
}

/** GitHub's anchor for a heading's text. */
function anchorOf(heading) {
  return heading
    .replace(/`/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

const anchorCache = new Map();
/** The anchors of a Markdown file's headings, repeats numbered as GitHub does. */
function anchorsOf(file) {
  if (!anchorCache.has(file)) {
    const seen = new Map();
    const anchors = new Set();
    for (const line of proseLines(readFileSync(file, 'utf8'))) {
      const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
      if (!m) continue;
      const base = anchorOf(m[1]);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      anchors.add(n === 0 ? base : `${base}-${n}`);
    }
    anchorCache.set(file, anchors);
  }
  return anchorCache.get(file);
}

/** Broken links of one Markdown file, as `file:line: target: reason` strings. */
function brokenLinks(file) {
  const problems = [];
  proseLines(readFileSync(file, 'utf8')).forEach((line, i) => {
    const prose = line.replace(/`[^`]*`/g, '');
    for (const m of prose.matchAll(/\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = m[1];
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      const [path, anchor] = target.split('#', 2);
      const to = path === '' ? file : resolve(dirname(file), decodeURIComponent(path));
      const where = `${relative(ROOT, file)}:${i + 1}: ${target}`;
      if (!existsSync(to)) problems.push(`${where}: no such file`);
      else if (anchor !== undefined && !to.endsWith('.md')) problems.push(`${where}: anchor into a file that is not Markdown`);
      else if (anchor !== undefined && statSync(to).isFile() && !anchorsOf(to).has(anchor))
        problems.push(`${where}: no heading with this anchor`);
    }
  });
  return problems;
}

function defaultFiles() {
  const docs = join(ROOT, 'docs');
  return [
    join(ROOT, 'README.md'),
    ...readdirSync(docs)
      .filter((f) => f.endsWith('.md'))
      .map((f) => join(docs, f)),
  ];
}

if (require.main === module) {
  const files = process.argv.length > 2 ? process.argv.slice(2).map((f) => resolve(f)) : defaultFiles();
  const problems = files.flatMap(brokenLinks);
  for (const p of problems) console.error(p);
  if (problems.length > 0) {
    console.error(`${problems.length} broken link(s) in ${files.length} file(s)`);
    process.exit(1);
  }
  console.log(`links: ${files.length} file(s), every relative link resolves`);
}

module.exports = { anchorOf, brokenLinks };
