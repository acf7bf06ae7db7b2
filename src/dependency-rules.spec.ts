import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/*
 * The import rules of docs/ARCHITECTURE.md, as `.dependency-cruiser.cjs` encodes them and
 * `npm run lint:deps` checks them: run dependency-cruiser with that configuration on small trees
 * written to a temporary directory, and read which rules it reports.
 */

const REPO = join(__dirname, '..');
const DEPCRUISE = join(REPO, 'node_modules', '.bin', 'depcruise');

interface Violation {
  rule: string;
  from: string;
  to: string;
}

/**
 * Writes `files` (path → source) under a fresh directory with a minimal tsconfig, and cruises its
 * `src/` with the repository's configuration: with `json` output, the violations; with the default
 * output (as `npm run lint:deps` runs it), the exit status and what it prints.
 */
function cruise(files: Record<string, string>, output: 'json' | 'err'): { status: number | null; stdout: string; violations: Violation[] } {
  const root = mkdtempSync(join(tmpdir(), 'glimpse-deps-'));
  try {
    writeFileSync(
      join(root, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { module: 'commonjs', strict: true }, include: ['src/**/*'] }),
    );
    for (const [path, source] of Object.entries(files)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), source);
    }
    const args = ['--config', join(REPO, '.dependency-cruiser.cjs'), ...(output === 'json' ? ['--output-type', 'json'] : []), 'src'];
    const run = spawnSync(DEPCRUISE, args, { cwd: root, encoding: 'utf8' });
    if (!run.stdout) throw new Error(`depcruise printed nothing (exit ${run.status}): ${run.stderr}`);
    if (output === 'err') return { status: run.status, stdout: run.stdout, violations: [] };
    const result = JSON.parse(run.stdout) as {
      summary: { violations: { rule: { name: string; severity: string }; from: string; to: string }[] };
    };
    // Every rule is an error, so each of these violations fails `npm run lint:deps` (and `npm test`).
    expect(result.summary.violations.filter((v) => v.rule.severity !== 'error')).toEqual([]);
    return {
      status: run.status,
      stdout: run.stdout,
      violations: result.summary.violations.map((v) => ({ rule: v.rule.name, from: v.from, to: v.to })),
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** A tree whose imports all follow the arrows: the baseline the forbidden imports are added to. */
const ALLOWED: Record<string, string> = {
  'src/config/app-config.ts': 'export const APP_CONFIG = "APP_CONFIG";\n',
  'src/common/api-error.ts': 'import { APP_CONFIG } from "../config/app-config";\nexport const CODE = APP_CONFIG;\n',
  'src/results/result-formats.ts': 'export const RESULT_FORMATS = ["png"];\n',
  'src/accounts/plan.ts': 'export const PLANS = ["free"];\n',
  'src/quota/quota-error-details.ts':
    'import { CODE } from "../common/api-error";\nimport { PLANS } from "../accounts/plan";\nexport const DETAILS = [CODE, PLANS];\n',
  'src/capture/capture-options.ts':
    'import { RESULT_FORMATS } from "../results/result-formats";\nexport const CAPTURE_LIMITS = RESULT_FORMATS;\n',
  'src/screenshots/screenshot-job.entity.ts': 'export class ScreenshotJob {}\n',
  'src/screenshots/screenshots.service.ts':
    'import { ScreenshotJob } from "./screenshot-job.entity";\nimport { CAPTURE_LIMITS } from "../capture/capture-options";\nexport const S = [ScreenshotJob, CAPTURE_LIMITS];\n',
  'src/events/event.entity.ts': 'export class EventRecord {}\n',
  'src/webhooks/dto/webhook-events.dto.ts':
    'import { RESULT_FORMATS } from "../../results/result-formats";\nexport const FORMATS = RESULT_FORMATS;\n',
  // Another module's entity as a type only: no repository is reached.
  'src/webhooks/webhook-deliveries.service.ts':
    'import type { EventRecord } from "../events/event.entity";\nexport function fanOut(event: EventRecord): EventRecord {\n  return event;\n}\n',
};

describe('dependency rules (.dependency-cruiser.cjs)', () => {
  it('pass a tree that follows the arrows of ARCHITECTURE.md', () => {
    const { status, stdout } = cruise(ALLOWED, 'err');
    expect(stdout).toContain('no dependency violations found');
    expect(status).toBe(0);
  });

  it('fail, with a non-zero exit, on common/ importing a feature (quota/) or the plans', () => {
    const { status, stdout } = cruise(
      {
        ...ALLOWED,
        'src/common/api-error-responses.decorator.ts':
          'import { DETAILS } from "../quota/quota-error-details";\nimport { PLANS } from "../accounts/plan";\nexport const D = [DETAILS, PLANS];\n',
      },
      'err',
    );
    expect(stdout).toContain(
      'error common-knows-no-feature: src/common/api-error-responses.decorator.ts → src/quota/quota-error-details.ts',
    );
    expect(stdout).toContain('error common-knows-no-feature: src/common/api-error-responses.decorator.ts → src/accounts/plan.ts');
    expect(status).not.toBe(0);
  });

  it('report each kind of forbidden import under its rule', () => {
    // File → its source, and the violations it must cause.
    const forbidden: Record<string, { source: string; violations: Omit<Violation, 'from'>[] }> = {
      'src/webhooks/dto/webhook-events.dto.ts': {
        source: 'import { CAPTURE_LIMITS } from "../../capture/capture-options";\nexport const HEIGHT = CAPTURE_LIMITS;\n',
        violations: [{ rule: 'webhooks-never-use-capture-or-browser', to: 'src/capture/capture-options.ts' }],
      },
      'src/webhooks/webhook-sender.ts': {
        source: 'import type { CAPTURE_LIMITS } from "../capture/capture-options";\nexport type L = typeof CAPTURE_LIMITS;\n',
        violations: [{ rule: 'webhooks-never-use-capture-or-browser', to: 'src/capture/capture-options.ts' }],
      },
      'src/quota/quota.service.ts': {
        source: 'import { ScreenshotJob } from "../screenshots/screenshot-job.entity";\nexport const Q = ScreenshotJob;\n',
        violations: [
          { rule: 'no-reaching-into-other-modules-entities', to: 'src/screenshots/screenshot-job.entity.ts' },
          { rule: 'layers-below-never-use-features', to: 'src/screenshots/screenshot-job.entity.ts' },
        ],
      },
      // A cycle is reported once, at the first file of it.
      'src/events/a.ts': {
        source: 'import { B } from "./b";\nexport const A = () => B;\n',
        violations: [{ rule: 'no-circular', to: 'src/events/b.ts' }],
      },
      'src/events/b.ts': { source: 'import { A } from "./a";\nexport const B = () => A;\n', violations: [] },
    };
    const files = { ...ALLOWED, ...Object.fromEntries(Object.entries(forbidden).map(([path, { source }]) => [path, source])) };
    const expected = Object.entries(forbidden).flatMap(([from, { violations }]) => violations.map((v) => ({ ...v, from })));
    expect(cruise(files, 'json').violations).toEqual(expect.arrayContaining(expected));
  });
});
