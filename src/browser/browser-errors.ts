/** Base of the browser pool's errors; `message` is customer-safe (no paths, no stacks). */
export class BrowserError extends Error {}

/** No usable browser: `CHROMIUM_PATH` points nowhere or no candidate exists. The message names the paths (operators only). */
export class BrowserUnavailableError extends BrowserError {}

/** The browser itself failed (crash, disconnect, renderer crash) rather than the page's content. */
export class BrowserGoneError extends BrowserError {
  /** Attempts the work made, this one included (set by the pool when it gives up). */
  attempts = 1;
}

/** A lease outlived its time budget; its context was closed. */
export class LeaseBudgetExceededError extends BrowserError {
  constructor(readonly budgetMs: number) {
    super(`exceeded its time budget of ${budgetMs} ms`);
  }
}

/** The pool is shutting down and takes no new leases. */
export class BrowserPoolClosedError extends BrowserError {
  constructor() {
    super('the browser pool is shutting down');
  }
}
