#!/usr/bin/env node
// `npm run build:js`: dist/ from src/ without type checking, for `openapi:check` and the system tests'
// processes (docs/testing.md). SWC transpiles each file with jest's settings (scripts/swc-options.js),
// a source map beside each, and the JSON files it imports copied; about a tenth of the CPU of `tsc --noCheck`. `npm run build`, the
// production build, stays tsc with its type check. Spec files are left out, as tsconfig.build.json does.
const { transformFile } = require('@swc/core');
const { copyFileSync, mkdirSync, readdirSync, writeFileSync } = require('node:fs');
const { basename, dirname, join, relative } = require('node:path');
const swcOptions = require('./swc-options');

const root = join(__dirname, '..');
const src = join(root, 'src');
const dist = join(root, 'dist');

/** Every file under `dir` whose name matches `pattern`. */
function filesUnder(dir, pattern) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return filesUnder(path, pattern);
    return pattern.test(entry.name) ? [path] : [];
  });
}

async function main() {
  const options = swcOptions(true);
  await Promise.all(
    filesUnder(src, /^(?!.*\.(spec|d)\.ts$).*\.ts$/).map(async (file) => {
      const out = join(dist, relative(src, file)).replace(/\.ts$/, '.js');
      const { code, map } = await transformFile(file, {
        ...options,
        filename: file,
        sourceFileName: relative(dirname(out), file),
        swcrc: false,
      });
      mkdirSync(dirname(out), { recursive: true });
      writeFileSync(out, `${code}\n//# sourceMappingURL=${basename(out)}.map\n`);
      if (map) writeFileSync(`${out}.map`, map);
    }),
  );
  // JSON the code imports (as `tsc` copies it with `resolveJsonModule`).
  for (const file of filesUnder(src, /\.json$/)) {
    const out = join(dist, relative(src, file));
    mkdirSync(dirname(out), { recursive: true });
    copyFileSync(file, out);
  }
}

main().catch((err) => {
  process.stderr.write(`build:js failed: ${err.stack ?? err}\n`);
  process.exit(1);
});
