#!/usr/bin/env node
// `npm test`: runs npm scripts in groups, e.g. `lint,typecheck,openapi:check test:jest`. The groups
// (separated by spaces) run one after another; the scripts of a group (separated by commas) run at the
// same time, as many as the machine has cores, and their output is printed as each ends, so it never
// interleaves. Stops after the first group with a failing script, and ends with a table of the time
// each script took and, for jest, each project (scripts/jest-project-times.js). Exits with the first
// failing script's exit code, 0 when all passed. Add a check by adding its script's name to a group.
const { spawn } = require('node:child_process');
const { existsSync, mkdtempSync, readFileSync, rmSync } = require('node:fs');
const { availableParallelism, tmpdir } = require('node:os');
const { join } = require('node:path');
const { formatProjectTimes } = require('./jest-project-times');

const groups = process.argv.slice(2).map((arg) => arg.split(',').filter(Boolean));
if (!groups.length) {
  process.stderr.write('usage: node scripts/run-tests.js <npm script>[,<npm script>...]...\n');
  process.exit(2);
}

const dir = mkdtempSync(join(tmpdir(), 'glimpse-test-times-'));
const timesFile = join(dir, 'projects.json');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const env = { ...process.env, GLIMPSE_TEST_TIMES_FILE: timesFile };

/** Runs `npm run <script>`; a script alone in its group writes straight to the terminal, others are buffered. */
function run(script, alone) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(npm, ['run', script], { env, stdio: alone ? 'inherit' : ['ignore', 'pipe', 'pipe'] });
    const output = [];
    child.stdout?.on('data', (d) => output.push(d));
    child.stderr?.on('data', (d) => output.push(d));
    child.on('close', (code, signal) => {
      if (!alone) process.stdout.write(Buffer.concat(output));
      resolve({ script, ms: Date.now() - started, code: code ?? (signal ? 1 : 0) });
    });
  });
}

/** Runs the scripts of `group`, at most `limit` at a time; resolves with their results in `group`'s order. */
async function runGroup(group, limit) {
  const results = new Array(group.length);
  let next = 0;
  const lane = async () => {
    while (next < group.length) {
      const index = next++;
      results[index] = await run(group[index], group.length === 1);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, group.length) }, lane));
  return results;
}

async function main() {
  const done = [];
  let exitCode = 0;
  for (const group of groups) {
    const started = Date.now();
    const results = await runGroup(group, availableParallelism());
    done.push({ results, ms: Date.now() - started });
    const failed = results.find((r) => r.code !== 0);
    if (failed) {
      exitCode = failed.code;
      break;
    }
  }

  const seconds = (ms) => (ms / 1000).toFixed(1).padStart(7);
  const lines = ['', 'npm test: time per script (scripts joined by + ran at the same time)', 'script               s   result'];
  for (const { results, ms } of done) {
    for (const { script, ms: own, code } of results)
      lines.push(`${script.padEnd(14)} ${seconds(own)}   ${code === 0 ? 'ok' : `failed (${code})`}`);
    if (results.length > 1) lines.push(`${`= ${results.map((r) => r.script).join(' + ')}`.slice(0, 60)}: ${(ms / 1000).toFixed(1)} s`);
  }
  for (const group of groups.slice(done.length))
    for (const script of group) lines.push(`${script.padEnd(14)} ${'-'.padStart(7)}   not run`);
  lines.push(`${'total'.padEnd(14)} ${seconds(done.reduce((sum, g) => sum + g.ms, 0))}`);
  if (existsSync(timesFile)) {
    lines.push('', "jest: time per project (wall: first start to last end; files: sum of the files' times)");
    lines.push(formatProjectTimes(JSON.parse(readFileSync(timesFile, 'utf8'))));
  }
  rmSync(dir, { recursive: true, force: true });
  process.stdout.write(`${lines.join('\n')}\n`);
  process.exit(exitCode);
}

main();
