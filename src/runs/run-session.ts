import { Logger } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CDPSession, Page } from 'playwright';
import {
  captureScreenshot,
  classifyPlaywrightError,
  describeActionFailure,
  documentHeight,
  EgressFailureLookup,
  elementPageBox,
  firstLine,
  fullPageHeight,
  ImageCap,
  navigate,
  PageFailure,
  proxyFailureFor,
  scrollPosition,
  TimeBudget,
  TimeLimitExceededError,
  truncate,
  withTimeLimit,
} from '../browser/page-toolkit';
import { CAPTURE_LIMITS } from '../capture/capture-options';
import type { ImageFormat } from '../results/result-formats';
import { EGRESS_ERROR_HEADER } from '../egress/egress-proxy';
import { PageErrorCollector, ConsoleErrorEntry, NetworkErrorEntry } from './page-errors';
import { RUN_LIMITS, RunStep, stepLabel, waitForUrlMatcher } from './run-steps';
import { VideoEncodingError } from '../recording/ffmpeg';
import type { Recording } from '../recording/frame-output';
import { ScreencastRecorder } from '../recording/screencast-recorder';

/** Where a run failed (CONTRACT.md, "Browser session runs", `failure.stage`). */
export const FAILURE_STAGES = ['step', 'timeout', 'browser', 'worker', 'finalize', 'canceled'] as const;
export type FailureStage = (typeof FAILURE_STAGES)[number];

/** Why a run failed: `stepIndex` is the step running then (null: before the first step, or after the last). */
export interface RunFailure {
  stage: FailureStage;
  stepIndex: number | null;
  /** Customer-safe message (the run's `finalizationError`). */
  message: string;
}

/** A JSON value. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** Result of one step (the run object's `steps[]`). */
export interface StepOutcome {
  index: number;
  action: RunStep['action'];
  status: 'ok' | 'failed' | 'skipped';
  durationMs: number;
  error: string | null;
  /** Stored file name of a `screenshot` step's image (a capability URL once published). */
  screenshotFile: string | null;
  /** JSON result of an `evaluate` step (at most {@link RUN_LIMITS.resultMaxBytes} of JSON). */
  result: JsonValue;
}

/** What {@link runSession} does. Times in ms, sizes in CSS px. */
export interface RunSessionSpec {
  /** The first page. */
  url: string;
  /** Steps in order, sensitive values included (never logged). */
  steps: RunStep[];
  /** The whole run's budget, from the start of the session (finalization not included). */
  timeoutMs: number;
  /** Limit of the first navigation (within the budget). */
  navigationTimeoutMs: number;
  /** Record a video, at this size, with this ffmpeg; null: no video. */
  video: { ffmpegPath: string; width: number; height: number } | null;
  /** Sensitive values to remove from every text the run keeps (URLs, messages, results). */
  sensitiveValues: string[];
  /**
   * The session's scale (`deviceScale`, device px per CSS px) and `MAX_IMAGE_PIXELS`: the scale and
   * size cap of step screenshots.
   */
  imageCap: ImageCap;
}

/** Hooks from the caller (the run processor). */
export interface RunSessionHooks {
  /** Stores a step screenshot; returns its file name. */
  saveScreenshot(image: Buffer, format: ImageFormat): Promise<string>;
  /** Called after each step with the outcomes so far (progress for pollers); errors are logged, not fatal. */
  onProgress?(steps: StepOutcome[]): Promise<void>;
  /** Aborted with reason `'canceled'` when the customer cancels the run, `'worker'` when the worker shuts down. */
  signal?: AbortSignal;
  /** Where the egress proxy's reasons for refused targets are looked up (the {@link EgressProxy}). */
  egress?: EgressFailureLookup;
}

/** Everything a session produced; the caller stores it and disposes of the video. */
export interface RunSessionOutcome {
  finalUrl: string | null;
  pageTitle: string | null;
  steps: StepOutcome[];
  consoleErrors: ConsoleErrorEntry[];
  networkErrors: NetworkErrorEntry[];
  consoleErrorCount: number;
  networkErrorCount: number;
  video: Recording | null;
  /** Why the video could not be made (the run then fails at stage `finalize` unless it failed before). */
  videoError: string | null;
  failure: RunFailure | null;
  /** Time from the session's start to the end of the last step, ms. */
  durationMs: number;
}

/** Ends a step early: the budget ran out, the browser crashed, the run was canceled or its worker stopped. */
export class RunInterrupted extends Error {
  constructor(readonly stage: 'timeout' | 'browser' | 'canceled' | 'worker') {
    super(stage);
  }
}

const logger = new Logger('RunSession');

/**
 * Runs a browser session on a fresh page (CONTRACT.md, "Browser session runs"): starts the video,
 * loads `url`, performs the steps in order, each bounded by its `timeoutMs` and by what is left of
 * the run's budget, and ends the video at the failure or after the last step. A failing step that
 * is not `optional` fails the run (`stage: step`) and the later steps are `skipped`; the budget
 * running out (`timeout`), the page crashing (`browser`) and a cancel (`canceled`) end it too.
 * Never throws for anything the page or the steps do; the caller closes the page's context.
 */
export async function runSession(page: Page, spec: RunSessionSpec, hooks: RunSessionHooks): Promise<RunSessionOutcome> {
  const budget = new TimeBudget(spec.timeoutMs);
  const redact = redactor(spec.sensitiveValues);
  const errors = new PageErrorCollector(page, {
    egressErrorHeader: EGRESS_ERROR_HEADER,
    describeFailure: (request, errorText) => proxyFailureFor(hooks.egress, request.url(), errorText),
    redact,
  });
  const interruption = interrupter(page, budget.deadline, hooks.signal);
  const steps: StepOutcome[] = [];
  let failure: RunFailure | null = null;
  let recorder: ScreencastRecorder | null = null;
  let videoError: string | null = null;
  let cdp: CDPSession | null = null;

  try {
    if (spec.video) {
      try {
        recorder = await ScreencastRecorder.start(page, {
          width: spec.video.width,
          height: spec.video.height,
          output: { encoding: 'run-webm', ffmpegPath: spec.video.ffmpegPath },
        });
      } catch (err) {
        videoError = err instanceof VideoEncodingError ? err.message : 'the screencast could not be started';
        if (!(err instanceof VideoEncodingError)) logger.warn(`Screencast did not start: ${(err as Error).message}`);
      }
    }
    try {
      await interruption.race(load(page, spec.url, budget.limit(spec.navigationTimeoutMs), hooks));
    } catch (err) {
      failure = toFailure(err, null, `navigation to the run's url failed`, redact, spec.timeoutMs);
    }
    for (const [index, step] of spec.steps.entries()) {
      if (failure) {
        steps.push({ index, action: step.action, status: 'skipped', durationMs: 0, error: null, screenshotFile: null, result: null });
        continue;
      }
      const stepStarted = Date.now();
      const ownTimeout = step.timeoutMs ?? RUN_LIMITS.stepTimeoutMs.default;
      const timeout = budget.limit(ownTimeout);
      const outcome: StepOutcome = {
        index,
        action: step.action,
        status: 'ok',
        durationMs: 0,
        error: null,
        screenshotFile: null,
        result: null,
      };
      try {
        const done = await interruption.race(
          perform(
            page,
            step,
            timeout,
            interruption.signal,
            hooks,
            spec.imageCap,
            async () => (cdp ??= await page.context().newCDPSession(page)),
          ),
        );
        outcome.screenshotFile = done.screenshotFile ?? null;
        outcome.result = done.result === undefined ? null : redactJson(done.result, redact);
      } catch (err) {
        const cause = err instanceof PageFailure && budget.cutShort(ownTimeout, timeout) ? new RunInterrupted('timeout') : err;
        const stepFailure = toFailure(cause, index, `step ${index} (${redact(stepLabel(step))})`, redact, spec.timeoutMs);
        outcome.status = 'failed';
        outcome.error = stepFailure.message;
        if (!step.optional || stepFailure.stage !== 'step') failure = stepFailure;
      }
      outcome.durationMs = Date.now() - stepStarted;
      steps.push(outcome);
      await hooks.onProgress?.(steps).catch((err) => logger.warn(`Could not record run progress: ${(err as Error).message}`));
    }
  } finally {
    interruption.dispose();
  }
  const ended = Date.now();
  const durationMs = budget.elapsedMs();

  let video: Recording | null = null;
  if (recorder) {
    try {
      video = await recorder.stop(ended);
    } catch (err) {
      videoError = err instanceof VideoEncodingError ? err.message : 'the video could not be finished';
      if (!(err instanceof VideoEncodingError)) logger.warn(`Video did not finish: ${(err as Error).message}`);
    }
  }
  const alive = !page.isClosed();
  const finalUrl = alive ? redact(page.url()) : null;
  const pageTitle = alive ? await withTimeLimit(page.title(), 2_000).then(redact, () => null) : null;
  return {
    finalUrl: finalUrl === 'about:blank' ? null : finalUrl,
    pageTitle,
    steps,
    consoleErrors: errors.consoleErrors,
    networkErrors: errors.networkErrors,
    consoleErrorCount: errors.consoleErrorCount,
    networkErrorCount: errors.networkErrorCount,
    video,
    videoError,
    failure,
    durationMs,
  };
}

/** Loads `url` until `load` with the toolkit's {@link navigate} (its failures are customer-safe {@link PageFailure}s). */
async function load(page: Page, url: string, timeoutMs: number, hooks: RunSessionHooks): Promise<void> {
  await navigate(page, url, { waitUntil: 'load', timeoutMs, egress: hooks.egress });
}

/**
 * Performs one step; resolves with what it produced, throws a {@link PageFailure} (or {@link RunInterrupted}) when it fails.
 * `ended` aborts when the run is interrupted or over: a `wait` step stops then, rather than keeping its timer.
 */
async function perform(
  page: Page,
  step: RunStep,
  timeout: number,
  ended: AbortSignal,
  hooks: RunSessionHooks,
  cap: ImageCap,
  cdp: () => Promise<CDPSession>,
): Promise<{ screenshotFile?: string; result?: JsonValue }> {
  try {
    switch (step.action) {
      case 'goto':
        await load(page, step.url, timeout, hooks);
        return {};
      case 'click':
        await page.locator(step.selector).first().click({ timeout });
        return {};
      case 'fill':
        await page
          .locator(step.selector)
          .first()
          .fill(step.value ?? missingSecret(), { timeout });
        return {};
      case 'press':
        if (step.selector) await page.locator(step.selector).first().press(step.key, { timeout });
        else await page.keyboard.press(step.key);
        return {};
      case 'hover':
        await page.locator(step.selector).first().hover({ timeout });
        return {};
      case 'select': {
        const locator = page.locator(step.selector).first();
        await locator.waitFor({ state: 'visible', timeout });
        const options = await locator.evaluate((el, value) => {
          if (!(el instanceof HTMLSelectElement)) return null;
          return Array.from(el.options).some((o) => o.value === value || o.label === value);
        }, step.value);
        if (options === null) throw new PageFailure('element is not a <select>');
        if (!options) throw new PageFailure(`no option "${step.value}"`);
        await locator.selectOption(step.value, { timeout });
        return {};
      }
      case 'check':
        await page.locator(step.selector).first().check({ timeout });
        return {};
      case 'uncheck':
        await page.locator(step.selector).first().uncheck({ timeout });
        return {};
      case 'scroll':
        if (step.selector) await page.locator(step.selector).first().scrollIntoViewIfNeeded({ timeout });
        else await page.evaluate((y) => window.scrollTo(0, y), step.y ?? 0);
        return {};
      case 'waitForSelector':
        await page.locator(step.selector).first().waitFor({ state: 'visible', timeout });
        return {};
      case 'waitForUrl':
        try {
          await page.waitForURL(waitForUrlMatcher(step.url), { timeout, waitUntil: 'commit' });
        } catch (err) {
          if (classifyPlaywrightError(err).kind === 'timeout')
            throw new PageFailure(`the URL did not match within ${timeout} ms (it is ${truncate(page.url(), 300)})`);
          throw err;
        }
        return {};
      case 'wait':
        await sleep(Math.min(step.ms, timeout), undefined, { signal: ended });
        if (step.ms > timeout) throw new PageFailure(`wait of ${step.ms} ms is longer than the step's ${timeout} ms`);
        return {};
      case 'evaluate':
        return { result: await evaluate(page, step.script, timeout) };
      case 'screenshot':
        return {
          screenshotFile: await hooks.saveScreenshot(await screenshot(page, await cdp(), step, timeout, cap), step.format ?? 'png'),
        };
    }
  } catch (err) {
    if (err instanceof PageFailure || err instanceof RunInterrupted) throw err;
    // The browser going away is the run's end (stage `browser`), not the step's failure.
    if (classifyPlaywrightError(err).kind === 'closed') throw new RunInterrupted('browser');
    const failed = {
      action: step.action,
      selector: 'selector' in step ? step.selector : undefined,
      key: step.action === 'press' ? step.key : undefined,
      timeoutMs: timeout,
    };
    throw new PageFailure(await describeActionFailure(err, page, failed));
  }
}

function missingSecret(): never {
  throw new PageFailure(
    'the sensitive value is no longer available (the run lost its queue entry before it started); submit the run again',
  );
}

/** Runs a script in the page (awaited if it returns a promise); its JSON result must fit in 10 KiB. */
async function evaluate(page: Page, script: string, timeout: number): Promise<JsonValue> {
  let value: JsonValue;
  try {
    value = await withTimeLimit(
      page.evaluate(async (source) => {
        const result = await (0, eval)(source);
        return (result === undefined ? null : JSON.parse(JSON.stringify(result) ?? 'null')) as JsonValue;
      }, script),
      timeout,
    );
  } catch (err) {
    if (err instanceof TimeLimitExceededError) throw new PageFailure(`the script ${err.message}`);
    throw new PageFailure(`the script failed: ${truncate(firstLine((err as Error)?.message ?? String(err)), 500)}`);
  }
  const size = Buffer.byteLength(JSON.stringify(value));
  if (size > RUN_LIMITS.resultMaxBytes)
    throw new PageFailure(`the script's result is ${size} bytes of JSON, more than ${RUN_LIMITS.resultMaxBytes}`);
  return value;
}

/**
 * A step screenshot with the toolkit's {@link captureScreenshot} (png, jpeg or webp, lossy ones at the
 * captures' default quality): the viewport where the page is scrolled to, the full page (cut as
 * captures' are, at the height cap divided by the scale and at `MAX_IMAGE_PIXELS`), or one element's
 * box (over `MAX_IMAGE_PIXELS`: "image larger than N pixels").
 */
async function screenshot(
  page: Page,
  cdp: CDPSession,
  step: Extract<RunStep, { action: 'screenshot' }>,
  timeout: number,
  cap: ImageCap,
): Promise<Buffer> {
  const viewport = page.viewportSize() ?? { width: 1280, height: 800 };
  let clip = { x: 0, y: 0, width: viewport.width, height: viewport.height, scale: 1 };
  if (step.selector) {
    const locator = page.locator(step.selector).first();
    await locator.scrollIntoViewIfNeeded({ timeout });
    const box = await elementPageBox(locator);
    if (box.width < 1 || box.height < 1) throw new PageFailure('the element has no visible box');
    clip = { ...box, scale: 1 };
  } else if (step.fullPage) {
    const full = fullPageHeight(await documentHeight(page), {
      viewportWidth: viewport.width,
      viewportHeight: viewport.height,
      scale: cap.deviceScale,
      maxImageHeightPx: CAPTURE_LIMITS.fullPageMaxHeightPx,
      maxImagePixels: cap.maxPixels,
    });
    clip = { ...clip, height: full.height };
  } else {
    clip = { ...clip, ...(await scrollPosition(page)) };
  }
  const format = step.format ?? 'png';
  // Device metrics are per DevTools session: the run's own session renders at scale 1, so the
  // session's scale is the clip's (the image is width × scale by height × scale px, as a capture's).
  return captureScreenshot(cdp, {
    format,
    quality: CAPTURE_LIMITS.quality.default,
    clip: { ...clip, scale: cap.deviceScale },
    beyondViewport: Boolean(step.fullPage || step.selector),
    timeoutMs: timeout,
    cap: { deviceScale: 1, maxPixels: cap.maxPixels },
  });
}

/**
 * The run failure for an error thrown at step `stepIndex` (null: the first navigation), labelled
 * `label` (CONTRACT.md, "Browser session runs": `failure.stage` and `finalizationError`): an
 * interruption is the run's (`timeout`, `browser`, `worker`, `canceled`), a {@link PageFailure} the
 * step's with its reason (sensitive values removed by `redact`), anything else an `unexpected error`
 * (logged, never shown). `budgetMs` is the run's budget.
 */
export function toFailure(
  err: unknown,
  stepIndex: number | null,
  label: string,
  redact: (text: string) => string,
  budgetMs: number,
): RunFailure {
  if (err instanceof RunInterrupted) {
    const during = stepIndex === null ? 'while loading the first page' : `during step ${stepIndex}`;
    if (err.stage === 'timeout')
      return { stage: 'timeout', stepIndex, message: `run exceeded its time budget of ${budgetMs} ms (${during})` };
    if (err.stage === 'browser') return { stage: 'browser', stepIndex, message: `the browser crashed ${during}` };
    if (err.stage === 'worker') return { stage: 'worker', stepIndex, message: `the worker shut down ${during}` };
    return { stage: 'canceled', stepIndex, message: 'the run was canceled' };
  }
  const reason = err instanceof PageFailure ? err.message : 'unexpected error';
  if (!(err instanceof PageFailure)) logger.error(`Unexpected run step failure: ${(err as Error)?.stack ?? String(err)}`);
  return { stage: 'step', stepIndex, message: `${label}: ${redact(reason)}` };
}

/**
 * Races a step against the run's interruptions: the budget's deadline (`deadline`, epoch ms), a page
 * crash or close, `signal` aborting (reason `worker`: the worker stops; any other: a cancel). The
 * rejection is a {@link RunInterrupted}. Its `signal` aborts on the first interruption and on
 * `dispose()`, so work a step left running (a `wait` step's timer) ends with the run.
 */
export function interrupter(page: Pick<Page, 'on' | 'off'>, deadline: number, signal?: AbortSignal) {
  let reject!: (err: RunInterrupted) => void;
  let interrupted: RunInterrupted | null = null;
  const ended = new AbortController();
  const stop = new Promise<never>((_, r) => (reject = r));
  stop.catch(() => undefined);
  const fire = (stage: RunInterrupted['stage']) => {
    if (interrupted) return;
    interrupted = new RunInterrupted(stage);
    reject(interrupted);
    ended.abort(interrupted);
  };
  const timer = setTimeout(() => fire('timeout'), Math.max(0, deadline - Date.now()));
  const onCrash = () => fire('browser');
  const onAbort = () => fire(signal?.reason === 'worker' ? 'worker' : 'canceled');
  page.on('crash', onCrash);
  page.on('close', onCrash);
  if (signal?.aborted) onAbort();
  signal?.addEventListener('abort', onAbort);
  return {
    signal: ended.signal,
    race<T>(work: Promise<T>): Promise<T> {
      work.catch(() => undefined);
      if (interrupted) return Promise.reject(interrupted);
      return Promise.race([work, stop]);
    },
    dispose() {
      ended.abort();
      clearTimeout(timer);
      page.off('crash', onCrash);
      page.off('close', onCrash);
      signal?.removeEventListener('abort', onAbort);
    },
  };
}

/**
 * A function removing every sensitive value from a text: the value as typed, URL-encoded,
 * form-encoded (a GET form puts it in the query string), and JSON-escaped once and twice (an
 * `evaluate` result is redacted as JSON text, and a page may return a JSON string of its own).
 */
export function redactor(values: string[]): (text: string) => string {
  const needles = [
    ...new Set(
      values
        .filter((v) => v.length > 0)
        .flatMap((v) => [v, encodeURIComponent(v), encodeURIComponent(v).replace(/%20/g, '+'), ...jsonEscaped(v)]),
    ),
  ].sort((a, b) => b.length - a.length);
  if (!needles.length) return (text) => text;
  return (text) => needles.reduce((out, needle) => out.split(needle).join('[redacted]'), text);
}

/** `value` as it appears inside a JSON string, escaped once and twice (only the forms that differ from it). */
function jsonEscaped(value: string): string[] {
  const once = JSON.stringify(value).slice(1, -1);
  const twice = JSON.stringify(once).slice(1, -1);
  return [once, twice].filter((form) => form !== value);
}

/** `value` with sensitive values removed from every string in it. */
function redactJson(value: JsonValue, redact: (text: string) => string): JsonValue {
  try {
    return JSON.parse(redact(JSON.stringify(value))) as JsonValue;
  } catch {
    return '[redacted]';
  }
}
