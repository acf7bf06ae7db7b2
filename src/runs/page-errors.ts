import type { Page, Request, Response } from 'playwright';
import { RUN_LIMITS } from './run-steps';

/** A console error of a run: the page's `console.error` call or an uncaught exception. */
export interface ConsoleErrorEntry {
  text: string;
  /** Script URL, when known. */
  url: string | null;
  /** 0-based line in `url`, when known. */
  lineNumber: number | null;
}

/** A network error of a run: a request that failed, or was answered 4xx/5xx. */
export interface NetworkErrorEntry {
  url: string;
  method: string;
  /** HTTP status of a 4xx/5xx answer; null when the request failed without one. */
  status: number | null;
  /** Why the request failed (`net::ERR_CONNECTION_REFUSED`, `Target not allowed: …`); null for a 4xx/5xx answer. */
  failure: string | null;
}

/** Chromium's own console line for a failed subresource: a network error, not a console error. */
const FAILED_RESOURCE_MESSAGE = /^Failed to load resource: /;

/** Longest text kept per entry, characters. */
const MAX_TEXT = 2_000;

/** Options of {@link PageErrorCollector}. */
export interface PageErrorCollectorOptions {
  /** Customer-readable reason for a request refused or failed by the egress proxy, if it knows one. */
  describeFailure?: (request: Request, errorText: string) => string | undefined;
  /** Response header by which the egress proxy marks an answer of its own (a refusal), with the reason. */
  egressErrorHeader?: string;
  /** Applied to every kept text and URL (removes sensitive values). */
  redact?: (text: string) => string;
}

/**
 * Collects a page's console errors and network errors for a run (CONTRACT.md, "Browser session
 * runs"): `console.error` calls and uncaught exceptions, not Chromium's "Failed to load resource"
 * lines (those requests are network errors); failed requests and 4xx/5xx answers. Requests the page
 * itself cancelled (`net::ERR_ABORTED`, e.g. by navigating away) are not errors. Everything is
 * counted; the first {@link RUN_LIMITS.keptErrors} of each kind are kept.
 */
export class PageErrorCollector {
  readonly consoleErrors: ConsoleErrorEntry[] = [];
  readonly networkErrors: NetworkErrorEntry[] = [];
  consoleErrorCount = 0;
  networkErrorCount = 0;
  private readonly redact: (text: string) => string;

  constructor(
    page: Page,
    private readonly options: PageErrorCollectorOptions = {},
  ) {
    this.redact = options.redact ?? ((text) => text);
    page.on('console', (message) => {
      if (message.type() !== 'error' || FAILED_RESOURCE_MESSAGE.test(message.text())) return;
      const location = message.location();
      this.addConsole({ text: message.text(), url: location.url || null, lineNumber: location.url ? location.lineNumber : null });
    });
    page.on('pageerror', (error) => {
      const at = /\(?((?:https?|file|data):[^\s)]+?):(\d+):\d+\)?/.exec(error.stack ?? '');
      this.addConsole({
        text: `Uncaught ${error.name || 'Error'}: ${error.message}`,
        url: at?.[1] ?? null,
        lineNumber: at ? Number(at[2]) - 1 : null,
      });
    });
    page.on('requestfailed', (request) => {
      const errorText = request.failure()?.errorText ?? 'failed';
      if (errorText === 'net::ERR_ABORTED') return;
      this.addNetwork({
        url: request.url(),
        method: request.method(),
        status: null,
        failure: this.options.describeFailure?.(request, errorText) ?? errorText,
      });
    });
    page.on('response', (response) => this.onResponse(response));
  }

  private onResponse(response: Response): void {
    if (response.status() < 400) return;
    const refusal = this.options.egressErrorHeader ? response.headers()[this.options.egressErrorHeader] : undefined;
    const request = response.request();
    this.addNetwork(
      refusal
        ? { url: request.url(), method: request.method(), status: null, failure: refusal }
        : { url: request.url(), method: request.method(), status: response.status(), failure: null },
    );
  }

  private addConsole(entry: ConsoleErrorEntry): void {
    this.consoleErrorCount++;
    if (this.consoleErrors.length >= RUN_LIMITS.keptErrors) return;
    this.consoleErrors.push({ ...entry, text: this.clean(entry.text), url: entry.url && this.clean(entry.url) });
  }

  private addNetwork(entry: NetworkErrorEntry): void {
    this.networkErrorCount++;
    if (this.networkErrors.length >= RUN_LIMITS.keptErrors) return;
    this.networkErrors.push({ ...entry, url: this.clean(entry.url), failure: entry.failure && this.clean(entry.failure) });
  }

  private clean(text: string): string {
    const redacted = this.redact(text);
    return redacted.length > MAX_TEXT ? `${redacted.slice(0, MAX_TEXT - 1)}…` : redacted;
  }
}
