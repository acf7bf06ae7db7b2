import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/*
 * `npm run lint:deps` as a whole (docs/development.md, "Import rules"): dependency-cruiser with
 * .dependency-cruiser.cjs, its JSON read by scripts/check-folder-cycles.js, run on small trees written to a
 * temporary directory. Every folder of src/ is in a layer, each rule of docs/ARCHITECTURE.md refuses its
 * kind of import, and a two-way folder pair not in the allowlist fails, as does an allowlisted pair that
 * is gone.
 */

const REPO = join(__dirname, '../..');
const DEPCRUISE = join(REPO, 'node_modules', '.bin', 'depcruise');
const CHECKER = join(REPO, 'scripts', 'check-folder-cycles.js');

let work: string;
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'glimpse-import-rules-'));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** dependency-cruiser's JSON for a tree of `files` (path → source) with a minimal tsconfig (bounded: 60 s). */
function cruise(name: string, files: Record<string, string>): string {
  const root = join(work, name);
  mkdirSync(root);
  writeFileSync(
    join(root, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { module: 'commonjs', strict: true }, include: ['src/**/*'] }),
  );
  for (const [path, source] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), source);
  }
  const run = spawnSync(DEPCRUISE, ['src', '--config', join(REPO, '.dependency-cruiser.cjs'), '--output-type', 'json'], {
    cwd: root,
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (!run.stdout) throw new Error(`depcruise printed nothing (exit ${run.status}): ${run.stderr}`);
  const json = join(root, 'cruise.json');
  writeFileSync(json, run.stdout);
  return json;
}

/** The checker's exit status and output lines for a cruise, with `allowed` as its allowlist of pairs. */
function check(json: string, allowed: string[]): { status: number | null; lines: string[] } {
  const allowlist = join(dirname(json), `allowed-${allowed.length}.cjs`);
  writeFileSync(allowlist, `module.exports = ${JSON.stringify(allowed)};\n`);
  const run = spawnSync(process.execPath, [CHECKER, '--input', json, '--allowlist', allowlist], { encoding: 'utf8', timeout: 30_000 });
  return { status: run.status, lines: `${run.stdout}${run.stderr}`.split('\n').filter(Boolean) };
}

const exportOf = (name: string, ...imports: string[]) =>
  `${imports.map((from, i) => `import * as m${i} from "${from}";`).join('\n')}\nexport const ${name} = [${imports.map((_, i) => `m${i}`).join(', ')}];\n`;

/** A tree that follows every rule: the baseline the forbidden imports are added to. */
const ALLOWED: Record<string, string> = {
  'src/config/app-config.ts': exportOf('CONFIG'),
  'src/common/api-error.ts': exportOf('ERR', '../config/app-config'),
  'src/results/result-formats.ts': exportOf('FORMATS'),
  'src/logging/logger.ts': exportOf('LOG', '../common/api-error', '../config/app-config'),
  'src/sql/sql.ts': exportOf('SQL', '../common/api-error'),
  // The entity registry imports every entity, a feature's too.
  'src/database/entities.ts': exportOf('ENTITIES', '../screenshots/screenshot-job.entity'),
  'src/queue/work-queue.ts': exportOf('QUEUE', '../sql/sql'),
  'src/metrics/metrics.ts': exportOf('METRICS', '../logging/logger', '../queue/work-queue'),
  'src/quota/quota.service.ts': exportOf('QUOTA', '../sql/sql', '../metrics/metrics'),
  'src/acceptance/acceptance.ts': exportOf('ACCEPT', '../quota/quota.service', '../sql/sql'),
  'src/storage/result-files.ts': exportOf('FILES', '../results/result-formats'),
  'src/results/storage-path.ts': exportOf('PATH'),
  'src/storage-destinations/storage-destinations.service.ts': exportOf('DEST', '../storage/result-files', '../results/storage-path'),
  'src/capture/capture-options.ts': exportOf('OPTIONS', '../results/result-formats', '../results/storage-path'),
  'src/screenshots/screenshot-job.entity.ts': 'export class ScreenshotJob {}\n',
  'src/screenshots/screenshots.service.ts': exportOf(
    'SCREENSHOTS',
    './screenshot-job.entity',
    '../capture/capture-options',
    '../acceptance/acceptance',
    '../storage-destinations/storage-destinations.service',
  ),
  'src/runs/runs.service.ts': exportOf('RUNS', '../screenshots/screenshots.service'),
  'src/monitors/monitors.service.ts': exportOf('MONITORS', '../screenshots/screenshots.service'),
  'src/main.ts': exportOf('MAIN', './screenshots/screenshots.service', './runs/runs.service'),
};

/** Forbidden imports, one file each (added to the baseline), and the line each must cause. */
const FORBIDDEN: Record<string, { source: string; line: string }> = {
  'src/widgets/widget.ts': {
    source: exportOf('WIDGET', '../config/app-config'),
    line: 'error every-folder-in-a-layer: src/widgets/widget.ts → src/config/app-config.ts',
  },
  'src/lonely/alone.ts': { source: exportOf('ALONE'), line: 'error every-folder-in-a-layer: src/lonely/ is in no layer' },
  'src/screenshots/widgets.ts': {
    source: exportOf('W', '../widgets/widget'),
    line: 'error every-imported-folder-in-a-layer: src/screenshots/widgets.ts → src/widgets/widget.ts',
  },
  'src/config/secrets.ts': {
    source: exportOf('SECRETS', '../common/api-error'),
    line: 'error config-uses-nothing-above: src/config/secrets.ts → src/common/api-error.ts',
  },
  'src/common/quota-details.ts': {
    source: exportOf('DETAILS', '../quota/quota.service'),
    line: 'error common-knows-no-feature: src/common/quota-details.ts → src/quota/quota.service.ts',
  },
  'src/results/errors.ts': {
    source: exportOf('R', '../common/api-error'),
    line: 'error results-vocabulary-imports-nothing: src/results/errors.ts → src/common/api-error.ts',
  },
  'src/logging/plans.ts': {
    source: exportOf('P', '../quota/quota.service'),
    line: 'error logging-knows-no-feature: src/logging/plans.ts → src/quota/quota.service.ts',
  },
  'src/sql/statement.ts': {
    source: exportOf('ST', '../queue/work-queue'),
    line: 'error sql-below-every-feature: src/sql/statement.ts → src/queue/work-queue.ts',
  },
  'src/database/data-source.ts': {
    source: exportOf('DS', '../screenshots/screenshots.service'),
    line: 'error database-knows-entities-only: src/database/data-source.ts → src/screenshots/screenshots.service.ts',
  },
  'src/webhooks/sender.ts': {
    source: exportOf('SENDER', '../capture/capture-options'),
    line: 'error webhooks-never-use-capture-or-browser: src/webhooks/sender.ts → src/capture/capture-options.ts',
  },
  'src/acceptance/fair-share.ts': {
    source: exportOf('FAIR', '../screenshots/screenshots.service'),
    line: 'error layers-below-never-use-features: src/acceptance/fair-share.ts → src/screenshots/screenshots.service.ts',
  },
  'src/metrics/dashboard-metrics.ts': {
    source: exportOf('DM', '../monitors/monitors.service'),
    line: 'error layers-below-never-use-features: src/metrics/dashboard-metrics.ts → src/monitors/monitors.service.ts',
  },
  'src/capture/delivery.ts': {
    source: exportOf('DELIVERY', '../storage-destinations/storage-destinations.service'),
    line: 'error layers-below-never-use-features: src/capture/delivery.ts → src/storage-destinations/storage-destinations.service.ts',
  },
  // No file below the features may import one, capture/capture-options.ts included (its path template is in results/).
  'src/storage/paths.ts': {
    source: exportOf('PATHS', '../storage-destinations/storage-destinations.service'),
    line: 'error layers-below-never-use-features: src/storage/paths.ts → src/storage-destinations/storage-destinations.service.ts',
  },
  'src/browser/pool.ts': {
    source: exportOf('POOL', '../capture/capture-options'),
    line: 'error capture-stack-points-down: src/browser/pool.ts → src/capture/capture-options.ts',
  },
  'src/egress/guard.ts': {
    source: exportOf('GUARD', '../browser/pool'),
    line: 'error egress-below-browser: src/egress/guard.ts → src/browser/pool.ts',
  },
  'src/health/boot.ts': {
    source: exportOf('BOOT', '../main'),
    line: 'error nothing-imports-a-process-entry: src/health/boot.ts → src/main.ts',
  },
  'src/runs/jobs.ts': {
    source: exportOf('JOBS', '../screenshots/screenshot-job.entity'),
    line: 'error no-reaching-into-other-modules-entities: src/runs/jobs.ts → src/screenshots/screenshot-job.entity.ts',
  },
  'src/events/a.ts': { source: exportOf('A', './b'), line: 'error no-circular: src/events/a.ts → src/events/b.ts' },
  'src/events/b.ts': { source: exportOf('B', './a'), line: 'error no-circular: src/events/b.ts → src/events/a.ts' },
  // runs/ and monitors/ may use each other by the rules, but not both ways.
  'src/screenshots/monitor-checks.ts': {
    source: exportOf('CHECKS', '../monitors/monitors.service'),
    line: 'error two-way-folder-pair: monitors <-> screenshots is a new two-way pair',
  },
};

describe('npm run lint:deps (.dependency-cruiser.cjs and scripts/check-folder-cycles.js)', () => {
  it('runs dependency-cruiser and the folder check', () => {
    const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts['lint:deps']).toBe(
      'depcruise src --config .dependency-cruiser.cjs --output-type json | node scripts/check-folder-cycles.js',
    );
  });

  it('passes a tree that follows every rule (one-way folder imports only)', () => {
    const { status, lines } = check(cruise('allowed', ALLOWED), []);
    expect(lines.join('\n')).toContain('no dependency violations found');
    expect(status).toBe(0);
  });

  it('fails on a forbidden import of each kind and on a new two-way folder pair, naming each', () => {
    const files = { ...ALLOWED, ...Object.fromEntries(Object.entries(FORBIDDEN).map(([path, { source }]) => [path, source])) };
    const { status, lines } = check(cruise('forbidden', files), []);
    for (const { line } of Object.values(FORBIDDEN)) {
      // A cycle is reported once, at either of its files.
      if (line.includes('no-circular')) continue;
      expect(lines).toContainEqual(expect.stringContaining(line));
    }
    expect(lines.filter((l) => l.startsWith('error no-circular: src/events/')).length).toBeGreaterThan(0);
    expect(status).toBe(1);
  });

  it('is a ratchet: an allowlisted pair passes, and an allowlisted pair that is gone fails until it is deleted', () => {
    const json = cruise('pair', { ...ALLOWED, 'src/screenshots/monitor-checks.ts': FORBIDDEN['src/screenshots/monitor-checks.ts'].source });
    expect(check(json, ['monitors <-> screenshots']).status).toBe(0);
    const gone = check(json, ['monitors <-> screenshots', 'accounts <-> auth']);
    expect(gone.lines).toContainEqual(expect.stringContaining('error two-way-folder-pair: accounts <-> auth is no longer two-way'));
    expect(gone.status).toBe(1);
  });

  it('allows no two-way folder pair in src/, and database/ holds no SQL helper', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { ALLOWED_PAIRS } = require(CHECKER) as { ALLOWED_PAIRS: string[] };
    expect(ALLOWED_PAIRS).toEqual([]);
    // database/ is the data source, the entity registry and migrations (ARCHITECTURE.md); the SQL helpers are in sql/.
    const database = readdirSync(join(REPO, 'src', 'database')).sort();
    expect(database).toEqual(['data-source.ts', 'entities.ts', 'migrate.ts', 'migrations', 'run-migrations.ts', 'setup-database.ts']);
    for (const helper of ['sql.ts', 'sql-statement.ts', 'group-commit.ts', 'guarded-pg-client.ts', 'secret-reseal.ts'])
      expect(existsSync(join(REPO, 'src', 'sql', helper))).toBe(true);
  });
});
