import { truncate } from '../browser/page-toolkit/playwright-errors';
import { compileGlob } from '../common/url-glob';
import type { ImageFormat } from '../results/result-formats';

/** Step actions of a browser session run (CONTRACT.md, "Browser session runs"). */
export const STEP_ACTIONS = [
  'goto',
  'click',
  'fill',
  'press',
  'hover',
  'select',
  'check',
  'uncheck',
  'scroll',
  'waitForSelector',
  'waitForUrl',
  'wait',
  'evaluate',
  'screenshot',
] as const;
export type StepAction = (typeof STEP_ACTIONS)[number];

/** Limits of runs and their steps (CONTRACT.md, "Browser session runs"). Times in ms. */
export const RUN_LIMITS = {
  maxSteps: 50,
  timeoutMs: { min: 1_000, max: 300_000, default: 60_000 },
  stepTimeoutMs: { min: 100, max: 300_000, default: 10_000 },
  waitMs: { min: 0, max: 10_000 },
  selectorMaxLength: 512,
  valueMaxLength: 10_000,
  keyMaxLength: 64,
  scriptMaxLength: 65_536,
  /** Largest `evaluate` result kept, bytes of JSON. */
  resultMaxBytes: 10_240,
  scrollYMax: 1_000_000,
  nameMaxLength: 100,
  /** Console and network errors kept per run (all are counted). */
  keptErrors: 100,
} as const;

/** Fields every step may have. */
export interface StepCommon {
  /** A failure is recorded and the run goes on. */
  optional?: boolean;
  /** This step's limit, ms (default 10,000), within what is left of the run's budget. */
  timeoutMs?: number;
}

/**
 * One step as stored and executed. A `fill` with `sensitive: true` is stored without its `value`;
 * the value travels only in the queue job and is merged back by the worker ({@link withSecrets}).
 */
export type RunStep = StepCommon &
  (
    | { action: 'goto'; url: string }
    | { action: 'click' | 'hover' | 'check' | 'uncheck' | 'waitForSelector'; selector: string }
    | { action: 'fill'; selector: string; value?: string; sensitive?: boolean }
    | { action: 'press'; key: string; selector?: string }
    | { action: 'select'; selector: string; value: string }
    | { action: 'scroll'; selector?: string; y?: number }
    | { action: 'waitForUrl'; url: string }
    | { action: 'wait'; ms: number }
    | { action: 'evaluate'; script: string }
    | { action: 'screenshot'; name?: string; fullPage?: boolean; selector?: string; format?: ImageFormat }
  );

/** Values of sensitive `fill` steps by step index: what the queue job carries besides the run id. */
export type SensitiveValues = Record<number, string>;

/**
 * Splits submitted steps into what may be stored (sensitive values removed) and the sensitive values
 * by step index.
 */
export function withoutSecrets(steps: RunStep[]): { stored: RunStep[]; secrets: SensitiveValues } {
  const secrets: SensitiveValues = {};
  const stored = steps.map((step, index) => {
    if (step.action !== 'fill' || !step.sensitive) return step;
    secrets[index] = step.value ?? '';
    const { value: _value, ...rest } = step;
    return rest;
  });
  return { stored, secrets };
}

/** Puts sensitive values back into stored steps; a sensitive `fill` whose value is missing keeps none. */
export function withSecrets(steps: RunStep[], secrets: SensitiveValues): RunStep[] {
  return steps.map((step, index) =>
    step.action === 'fill' && step.sensitive && index in secrets ? { ...step, value: secrets[index] } : step,
  );
}

/**
 * The test of a `waitForUrl` step (CONTRACT.md, "Browser session runs"; "Tenancy: fair share and
 * isolation": customer globs match in linear time), given to Playwright's `page.waitForURL` as a
 * predicate on the page's URL, so Playwright's own glob conversion (a regular expression) never sees
 * customer input (docs/runs.md, "Steps"):
 *
 * - without `*`, an exact URL: equal to the page's URL once both are parsed as URLs (`HTTPS://App.Test`
 *   is `https://app.test/`); a string that does not parse is compared as it is;
 * - with `*`, a glob over the whole URL ({@link compileGlob}: `*` any characters, `/` included, so `**`
 *   is the same as `*`; every other character, `?` included, itself). A leading `scheme://host[:port]`
 *   followed by `/`, `?` or `#` is normalised as the page's URL is (scheme and host lower-case, a
 *   default port dropped). Time linear in the URL's length.
 *
 * Never throws.
 */
export function waitForUrlMatcher(pattern: string): (url: URL) => boolean {
  if (!pattern.includes('*')) {
    const exact = parsedHref(pattern) ?? pattern;
    return (url) => url.href === exact;
  }
  const matches = compileGlob(normalizedOrigin(pattern));
  return (url) => matches(url.href);
}

function parsedHref(text: string): string | null {
  try {
    return new URL(text).href;
  } catch {
    return null;
  }
}

/** `pattern` with its leading `scheme://authority` (when it has one, without `*`) as `URL` writes it. */
function normalizedOrigin(pattern: string): string {
  const authorityStart = pattern.indexOf('://');
  if (authorityStart <= 0 || pattern.slice(0, authorityStart).includes('*')) return pattern;
  let end = authorityStart + 3;
  while (end < pattern.length && !'/?#'.includes(pattern[end])) end++;
  if (end === pattern.length || pattern.slice(authorityStart + 3, end).includes('*')) return pattern;
  const origin = parsedHref(`${pattern.slice(0, end)}/`);
  return origin ? `${origin.slice(0, -1)}${pattern.slice(end)}` : pattern;
}

/**
 * How a step is named in messages: `click "#buy"`, `goto "https://…"`, `wait 500 ms`. Never
 * includes a `fill` value or a script.
 */
export function stepLabel(step: RunStep): string {
  switch (step.action) {
    case 'goto':
    case 'waitForUrl':
      return `${step.action} "${truncate(step.url, 200)}"`;
    case 'press':
      return step.selector ? `press "${step.key}" in "${truncate(step.selector, 200)}"` : `press "${step.key}"`;
    case 'wait':
      return `wait ${step.ms} ms`;
    case 'evaluate':
      return 'evaluate';
    case 'screenshot':
      return step.name ? `screenshot "${step.name}"` : 'screenshot';
    case 'scroll':
      return step.selector ? `scroll to "${truncate(step.selector, 200)}"` : `scroll to y ${step.y ?? 0}`;
    default:
      return `${step.action} "${truncate(step.selector, 200)}"`;
  }
}
