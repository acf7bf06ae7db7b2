#!/usr/bin/env node
/**
 * Where a process's CPU went, from a V8 `.cpuprofile` (`node --cpu-prof`, e.g. the service under
 * `BENCH_SERVICE_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof' npm run bench`, docs/performance.md).
 *
 *   node bench/profile-self.js <file.cpuprofile> [fromUs-toUs] [--top N]
 *
 * `fromUs-toUs` keeps the samples taken in that window of the monotonic clock (µs; the bench prints
 * the window it measured). Prints the busy time (every sample but `(idle)`), then its share by group:
 * - "self": the sampled function's own group (a Node internal's time under `node`);
 * - "charged": the first frame up the stack that is not Node's own (a socket write charged to the
 *   package that wrote), which is how the docs split the service's CPU;
 * then the N costliest functions by self time. Groups: packages under node_modules (some merged:
 * Playwright, PostgreSQL, Bull/Redis, Express/Nest), the service's own folders (`src/<folder>`),
 * `GC`, `program` (V8's own work outside JavaScript) and `node`.
 */
const { readFileSync } = require('node:fs');

const MERGED = [
  [/^(playwright|playwright-core)$/, 'playwright'],
  [/^(pg|pg-.*|postgres-.*|typeorm)$/, 'pg/typeorm'],
  [/^(bull|ioredis|redis-.*|cluster-key-slot|denque)$/, 'bull/ioredis'],
  [
    /^(express|@nestjs\/.*|body-parser|router|path-to-regexp|raw-body|finalhandler|send|serve-static|on-finished|rxjs|reflect-metadata)$/,
    'express/nest',
  ],
  [/^(pino|pino-.*|sonic-boom|thread-stream|fast-redact|quick-format-unescaped)$/, 'pino (logging)'],
  [/^(prom-client|tdigest|bintrees)$/, 'prom-client (metrics)'],
];

/** The group of a profile call frame's URL and function name. */
function groupOf(url, name) {
  if (name === '(garbage collector)') return 'GC';
  if (name === '(program)' || name === '(idle)' || name === '(root)') return name.slice(1, -1);
  if (!url || url.startsWith('node:')) return 'node';
  const path = url.replace(/^file:\/\//, '');
  const mod = /.*node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (mod) {
    const found = MERGED.find(([re]) => re.test(mod[1]));
    return found ? found[1] : mod[1];
  }
  const own = /\/(?:dist|src)\/([^/]+)\//.exec(path);
  if (own) return `src/${own[1]}`;
  const top = /\/(?:dist|src)\/([^/]+)$/.exec(path);
  return top ? `src/${top[1]}` : path;
}

function main() {
  const args = process.argv.slice(2);
  const file = args[0];
  const topAt = args.indexOf('--top');
  const top = topAt >= 0 ? Number(args[topAt + 1]) : 25;
  const window = args.slice(1).find((a) => /^\d+-\d+$/.test(a));
  const [from, to] = window ? window.split('-').map(Number) : [-Infinity, Infinity];
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const selfUs = new Map();
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i];
    // A sample stands for the time until the next one.
    const dt = i + 1 < profile.timeDeltas.length ? profile.timeDeltas[i + 1] : 0;
    if (t < from || t > to) continue;
    selfUs.set(profile.samples[i], (selfUs.get(profile.samples[i]) ?? 0) + dt);
  }
  const self = new Map();
  const charged = new Map();
  const fns = new Map();
  let busy = 0;
  let idle = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id);
    const { url, functionName, lineNumber } = node.callFrame;
    const group = groupOf(url, functionName);
    if (group === 'idle') {
      idle += us;
      continue;
    }
    busy += us;
    self.set(group, (self.get(group) ?? 0) + us);
    let charge = group;
    for (let up = id; charge === 'node' && parent.has(up);) {
      up = parent.get(up);
      const f = byId.get(up).callFrame;
      const g = groupOf(f.url, f.functionName);
      if (g !== 'node' && g !== 'root') charge = g;
    }
    charged.set(charge, (charged.get(charge) ?? 0) + us);
    const fn = `${functionName || '(anonymous)'} ${url.replace(/^.*node_modules\//, '').replace(/^.*\/(dist|src)\//, 'src/')}:${lineNumber + 1}`;
    fns.set(fn, (fns.get(fn) ?? 0) + us);
  }
  const pct = (us) => `${((us / busy) * 100).toFixed(1).padStart(5)} %  ${(us / 1000).toFixed(0).padStart(7)} ms`;
  console.log(`${file}${window ? ` window ${window}` : ''}: busy ${(busy / 1000).toFixed(0)} ms, idle ${(idle / 1000).toFixed(0)} ms`);
  const print = (title, map, n = Infinity) => {
    console.log(`\n${title}`);
    for (const [k, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, n)) console.log(`  ${pct(us)}  ${k}`);
  };
  print('self time by group', self);
  print("charged to the first frame that is not Node's own", charged);
  print('functions by self time', fns, top);
}

main();
