#!/usr/bin/env node
// `npm test`: runs the npm scripts named on the command line one after another (e.g. `typecheck
// openapi:check openapi:lint test:jest`), stops at the first that fails, and ends with a table of the
// time each step took and, for jest, each project (scripts/jest-project-times.js). Exits with the
// failing step's exit code, 0 when all passed. Add a step by adding its script name to `test`.
const { spawnSync } = require('node:child_process');
const { existsSync, mkdtempSync, readFileSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { formatProjectTimes } = require('./jest-project-times');

const steps = process.argv.slice(2);
if (!steps.length) {
  process.stderr.write('usage: node scripts/run-tests.js <npm script>...\n');
  process.exit(2);
}

const dir = mkdtempSync(join(tmpdir(), 'glimpse-test-times-'));
const timesFile = join(dir, 'projects.json');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const done = [];
let exitCode = 0;
for (const step of steps) {
  const started = Date.now();
  const result = spawnSync(npm, ['run', step], {
    stdio: 'inherit',
    env: { ...process.env, GLIMPSE_TEST_TIMES_FILE: timesFile },
  });
  const code = result.status ?? 1;
  done.push({ step, ms: Date.now() - started, code });
  if (code !== 0) {
    exitCode = code;
    break;
  }
}

const lines = ['', 'npm test: time per step', 'step               s   result'];
for (const { step, ms, code } of done)
  lines.push(`${step.padEnd(14)} ${(ms / 1000).toFixed(1).padStart(6)}   ${code === 0 ? 'ok' : `failed (${code})`}`);
for (const step of steps.slice(done.length)) lines.push(`${step.padEnd(14)} ${'-'.padStart(6)}   not run`);
const total = done.reduce((sum, s) => sum + s.ms, 0);
lines.push(`${'total'.padEnd(14)} ${(total / 1000).toFixed(1).padStart(6)}`);
if (existsSync(timesFile)) {
  lines.push('', "jest: time per project (wall: first start to last end; files: sum of the files' times)");
  lines.push(formatProjectTimes(JSON.parse(readFileSync(timesFile, 'utf8'))));
}
rmSync(dir, { recursive: true, force: true });
process.stdout.write(`${lines.join('\n')}\n`);
process.exit(exitCode);
