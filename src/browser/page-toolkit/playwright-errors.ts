import type { Page } from 'playwright';

/**
 * A failure of browser work whose message is customer-safe by construction: it is shown as a capture
 * job's `error` or in a run's `finalizationError` / `steps[].error` (CONTRACT.md, "Errors" and
 * "Browser session runs"). Built from the vocabulary below, from the egress proxy's refusals, or from
 * texts the caller wrote; never from a stack, a file path or a call log.
 */
export class PageFailure extends Error {}

/** What a Playwright (or Chromium) error was about; see {@link classifyPlaywrightError}. */
export type PlaywrightErrorKind =
  /** A Playwright time limit ran out (`Timeout 300ms exceeded.`, `TimeoutError`). */
  | 'timeout'
  /** Chromium's network error for the request (`net::ERR_CONNECTION_REFUSED`, …): see `netError`. */
  | 'network'
  /** The page, its context or the browser went away under the call. */
  | 'closed'
  /** `keyboard.press` / `locator.press` with a key name Playwright does not know. */
  | 'unknownKey'
  /** A selector that does not parse. */
  | 'invalidSelector'
  /** `fill` on an element that is not an input, textarea or contenteditable element. */
  | 'notEditable'
  /** `check` / `uncheck` on an element that is not a checkbox or radio button. */
  | 'notCheckable'
  /** Anything else; `text` holds its first line. */
  | 'other';

/** A Playwright error, read. */
export interface ClassifiedError {
  kind: PlaywrightErrorKind;
  /** The `net::ERR_…` name, for kind `network`. */
  netError: string | null;
  /**
   * The error's first line without Playwright's API prefix (`locator.click: `, `page.evaluate: `)
   * and with anything path-like replaced ({@link redactInternals}). Never the call log,
   * which can echo a `fill` value.
   */
  text: string;
}

/** Playwright's own text after the first line: the call log, or the `=== logs ===` block. */
const LOG_START = /\n(?:Call log:|=+ logs =+)/;
const TIMEOUT = /Timeout \d+ms exceeded/;
const NET_ERROR = /net::ERR_[A-Z_]+/;
const CLOSED = /Target (page, context or browser )?(has been )?closed|Browser closed|browser has disconnected/i;
const UNKNOWN_KEY = /Unknown key|Unknown keyboard key/i;
const INVALID_SELECTOR = /(is not a valid selector|Unexpected token|Unknown engine|Failed to parse selector|Invalid selector)/i;
const NOT_EDITABLE = /Element is not an <input>|not an <input>, <textarea>|contenteditable/i;
const NOT_CHECKABLE = /Not a checkbox or radio button/i;
/** Playwright's prefix naming the API call (`locator.click: `, `page.evaluate: `). */
const API_PREFIX = /^[a-zA-Z.]+: /;

/**
 * Reads a Playwright error into a {@link ClassifiedError}. Only the error's head is read (the text
 * before Playwright's call log): a call log names the elements it waited for, so a `contenteditable`
 * or `Target closed` there says nothing about the failure. Shapes and examples in
 * src/browser/page-toolkit/playwright-errors.spec.ts (messages as Playwright 1.x prints them).
 */
export function classifyPlaywrightError(err: unknown): ClassifiedError {
  const message = err instanceof Error ? err.message : String(err);
  const head = message.split(LOG_START)[0];
  const text = redactInternals(firstLine(head));
  const of = (kind: PlaywrightErrorKind, netError: string | null = null): ClassifiedError => ({ kind, netError, text });
  if ((err instanceof Error && err.name === 'TimeoutError') || TIMEOUT.test(head)) return of('timeout');
  const net = NET_ERROR.exec(head);
  if (net) return of('network', net[0]);
  if (CLOSED.test(head)) return of('closed');
  if (UNKNOWN_KEY.test(head)) return of('unknownKey');
  if (INVALID_SELECTOR.test(head)) return of('invalidSelector');
  if (NOT_EDITABLE.test(head)) return of('notEditable');
  if (NOT_CHECKABLE.test(head)) return of('notCheckable');
  return of('other');
}

/** Whether `err` is a Playwright timeout (or a `TimeoutError` of any origin). */
export function isTimeout(err: unknown): boolean {
  return classifyPlaywrightError(err).kind === 'timeout';
}

/** The first line of an error's message without Playwright's API prefix (`page.evaluate: `, `locator.click: `). */
export function firstLine(message: string): string {
  return message.split('\n')[0].replace(API_PREFIX, '');
}

/**
 * `text` with anything that looks like a file system path replaced by `[internal]`, so a browser
 * message can never show the customer where the service keeps its files. URLs are kept.
 */
export function redactInternals(text: string): string {
  return text.replace(/(?<![\w:/.%-])\/(?:[\w.@+-]+\/)*[\w.@+-]+/g, '[internal]');
}

/** `text` cut to `max` characters, the cut marked with `…` (within `max`). */
export function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * The customer-safe messages of browser work, one place for the words (CONTRACT.md, "Errors";
 * "Browser session runs", `failure`). Times in ms.
 */
export const PAGE_MESSAGES = {
  navigationTimedOut: (ms: number) => `navigation timed out after ${ms} ms`,
  timedOut: (ms: number) => `timed out after ${ms} ms`,
  selectorNotVisible: (ms: number) => `selector not visible within ${ms} ms`,
  elementNotReady: (action: string, ms: number) => `the element was not ready for ${action} within ${ms} ms (disabled, covered or moving)`,
  unknownKey: (key: string) => `unknown key "${key}"`,
  invalidSelector: 'invalid selector',
  notEditable: 'the element is not an input, textarea or contenteditable element',
  notCheckable: 'the element is not a checkbox or radio button',
} as const;

/** Longest Playwright text quoted in an action's failure. */
const ACTION_TEXT_MAX = 300;

/** What {@link describeActionFailure} needs to know about the failed action. */
export interface FailedAction {
  /** The action's name as the customer wrote it (`click`, `fill`, …). */
  action: string;
  /** The element's selector, when the action had one. */
  selector?: string;
  /** The key of a `press`. */
  key?: string;
  /** The action's time limit, ms. */
  timeoutMs: number;
}

/**
 * The customer-safe reason an element action (click, fill, press, hover, check, wait for a selector…)
 * failed, from {@link PAGE_MESSAGES}; a timeout on a selector says whether the element was there but
 * not actionable (looked up on `page`). Kind `closed` is the caller's to handle first (the browser
 * went away: not the action's fault); here it is described by its first line like any other error.
 */
export async function describeActionFailure(err: unknown, page: Page, failed: FailedAction): Promise<string> {
  const { kind, text } = classifyPlaywrightError(err);
  switch (kind) {
    case 'unknownKey':
      return PAGE_MESSAGES.unknownKey(failed.key ?? '');
    case 'invalidSelector':
      return PAGE_MESSAGES.invalidSelector;
    case 'notEditable':
      return PAGE_MESSAGES.notEditable;
    case 'notCheckable':
      return PAGE_MESSAGES.notCheckable;
    case 'timeout': {
      if (!failed.selector) return PAGE_MESSAGES.timedOut(failed.timeoutMs);
      const visible = await page
        .locator(failed.selector)
        .first()
        .isVisible()
        .catch(() => false);
      return visible ? PAGE_MESSAGES.elementNotReady(failed.action, failed.timeoutMs) : PAGE_MESSAGES.selectorNotVisible(failed.timeoutMs);
    }
    default:
      return truncate(text, ACTION_TEXT_MAX);
  }
}
