// jest reporter (jest.config.js): the time each project took. Per project: the files run, the failed
// ones, the wall time from its first file's start to its last file's end (projects overlap when they
// share the workers) and the sum of its files' times (ms of worker time). Printed once the run ends;
// with GLIMPSE_TEST_TIMES_FILE set (scripts/run-tests.js), written there as JSON for the runner's table
// instead.
const { writeFileSync } = require('node:fs');

class ProjectTimes {
  constructor() {
    this.projects = new Map();
  }

  onTestResult(test, result) {
    const name = test.context.config.displayName?.name ?? 'default';
    const row = this.projects.get(name) ?? { project: name, files: 0, failed: 0, start: Infinity, end: 0, fileMs: 0 };
    const { start, end } = result.perfStats;
    row.files += 1;
    if (result.numFailingTests > 0 || result.testExecError) row.failed += 1;
    if (start && end) {
      row.start = Math.min(row.start, start);
      row.end = Math.max(row.end, end);
      row.fileMs += end - start;
    }
    this.projects.set(name, row);
  }

  onRunComplete() {
    const rows = [...this.projects.values()].map(({ project, files, failed, start, end, fileMs }) => ({
      project,
      files,
      failed,
      wallMs: end > start ? end - start : 0,
      fileMs,
    }));
    if (process.env.GLIMPSE_TEST_TIMES_FILE) {
      writeFileSync(process.env.GLIMPSE_TEST_TIMES_FILE, JSON.stringify(rows));
      return;
    }
    process.stderr.write(`\n${formatProjectTimes(rows)}\n`);
  }
}

/** A text table of `rows` ({ project, files, failed, wallMs, fileMs }). */
function formatProjectTimes(rows) {
  const lines = ['project    files  failed   wall s  files s'];
  for (const r of rows) {
    lines.push(
      `${r.project.padEnd(9)} ${String(r.files).padStart(6)} ${String(r.failed).padStart(7)} ${(r.wallMs / 1000).toFixed(1).padStart(8)} ${(r.fileMs / 1000).toFixed(1).padStart(8)}`,
    );
  }
  return lines.join('\n');
}

module.exports = ProjectTimes;
module.exports.formatProjectTimes = formatProjectTimes;
