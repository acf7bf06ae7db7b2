// The second half of `npm run lint:deps`: reads dependency-cruiser's JSON output (stdin, or the file named
// by --input) for `src/`, and fails (exit 1) when
// - a rule of .dependency-cruiser.cjs is broken (each violation printed as `error <rule>: <from> → <to>`);
// - a module lies in a folder of src/ that no layer of .dependency-cruiser.cjs lists (rule
//   `every-folder-in-a-layer`, here also for folders whose files import nothing);
// - two folders of src/ import each other (folder A imports folder B and B imports A) and the pair is not
//   in ALLOWED_PAIRS below; or a pair of ALLOWED_PAIRS is gone (delete it: the list only shrinks).
// docs/development.md, "Import rules". `--allowlist <file>` reads the allowed pairs from a CommonJS module
// exporting such a list instead (test/unit/import-rules.spec.ts runs the check on small trees).
const { readFileSync } = require('node:fs');
const { resolve } = require('node:path');

/**
 * The two-way folder pairs of src/ that remain, each `a <-> b` in alphabetical order, with
 * what makes it two-way. A ratchet: a pair may leave the list (when the moves that undo it are made), never
 * join it. Files at the root of src/ (entry points, app.module.ts) are no folder and are not counted.
 */
const ALLOWED_PAIRS = [];

/** `src/<folder>/…` → `<folder>`; files at the root of src/ and outside it → null. */
function folderOf(path) {
  const match = /^src\/([^/]+)\//.exec(path);
  return match ? match[1] : null;
}

/**
 * The two-way folder pairs of a dependency-cruiser result (`modules[].source`, `dependencies[].resolved`),
 * each `a <-> b` with a < b, sorted; and for each, one import of each direction as an example.
 */
function folderPairs(result) {
  const examples = new Map();
  for (const module of result.modules) {
    const from = folderOf(module.source);
    if (!from) continue;
    for (const dependency of module.dependencies) {
      const to = folderOf(dependency.resolved);
      if (!to || to === from) continue;
      const edge = `${from} -> ${to}`;
      if (!examples.has(edge)) examples.set(edge, `${module.source} → ${dependency.resolved}`);
    }
  }
  const pairs = [];
  for (const edge of examples.keys()) {
    const [a, b] = edge.split(' -> ');
    if (a < b && examples.has(`${b} -> ${a}`))
      pairs.push({ pair: `${a} <-> ${b}`, examples: [examples.get(edge), examples.get(`${b} -> ${a}`)] });
  }
  return pairs.sort((x, y) => (x.pair < y.pair ? -1 : 1));
}

/** The folders of modules that no layer lists: those the rule `every-folder-in-a-layer` does not exclude. */
function foldersOutsideLayers(result, config) {
  const rule = config.forbidden.find((r) => r.name === 'every-folder-in-a-layer');
  const known = new RegExp(rule.from.pathNot);
  const outside = new Set();
  for (const module of result.modules) if (folderOf(module.source) && !known.test(module.source)) outside.add(folderOf(module.source));
  return [...outside].sort();
}

/** The problems of a result: rule violations, folders outside the layers, new pairs and pairs gone from `allowed`. */
function problemsOf(result, config, allowed) {
  const problems = result.summary.violations.map((v) => `error ${v.rule.name}: ${v.from} → ${v.to}`);
  for (const folder of foldersOutsideLayers(result, config))
    problems.push(`error every-folder-in-a-layer: src/${folder}/ is in no layer of .dependency-cruiser.cjs (LAYERS)`);
  const pairs = folderPairs(result);
  for (const { pair, examples } of pairs) {
    if (!allowed.includes(pair)) problems.push(`error two-way-folder-pair: ${pair} is a new two-way pair (${examples.join('; ')})`);
  }
  for (const pair of allowed) {
    if (!pairs.some((p) => p.pair === pair))
      problems.push(
        `error two-way-folder-pair: ${pair} is no longer two-way: delete it from ALLOWED_PAIRS (scripts/check-folder-cycles.js)`,
      );
  }
  return problems;
}

function main(argv) {
  const option = (name) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
  const input = option('--input');
  const text = readFileSync(input ?? 0, 'utf8');
  let result;
  try {
    result = JSON.parse(text);
  } catch {
    process.stderr.write(`dependency-cruiser printed no JSON:\n${text.slice(0, 2000)}\n`);
    return 1;
  }
  const config = require(resolve(__dirname, '..', '.dependency-cruiser.cjs'));
  const allowlist = option('--allowlist');
  const allowed = allowlist ? require(resolve(allowlist)) : ALLOWED_PAIRS;
  const problems = problemsOf(result, config, allowed);
  const { totalCruised, totalDependenciesCruised } = result.summary;
  if (problems.length === 0) {
    process.stdout.write(
      `✔ no dependency violations found (${totalCruised} modules, ${totalDependenciesCruised} dependencies cruised); ` +
        `two-way folder pairs: ${allowed.length} allowed, none new\n`,
    );
    return 0;
  }
  process.stdout.write(
    `${problems.join('\n')}\n\n✘ ${problems.length} import problem(s) (.dependency-cruiser.cjs, scripts/check-folder-cycles.js)\n`,
  );
  return 1;
}

module.exports = { ALLOWED_PAIRS, folderPairs, problemsOf };

if (require.main === module) process.exit(main(process.argv.slice(2)));
