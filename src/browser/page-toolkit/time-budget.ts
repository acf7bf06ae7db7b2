/**
 * A time budget for browser work (a capture's waits, a run's steps; CONTRACT.md, "Capture options",
 * `timeout`, and "Browser session runs", `timeoutMs`): started once, then every wait inside it is
 * given the smaller of its own limit and what is left. Times in ms; `now` is injectable for tests.
 */
export class TimeBudget {
  /** Epoch ms at which the budget runs out. */
  readonly deadline: number;
  private readonly started: number;

  constructor(
    /** The whole budget, ms. */
    readonly totalMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.started = now();
    this.deadline = this.started + totalMs;
  }

  /** Time since the budget started, ms. */
  elapsedMs(): number {
    return this.now() - this.started;
  }

  /** Time left, ms (0 once spent). */
  remainingMs(): number {
    return Math.max(0, this.deadline - this.now());
  }

  /**
   * The limit for a wait whose own limit is `ownMs`: the smaller of it and what is left, and at least
   * 1 ms (Playwright reads a timeout of 0 as "no limit").
   */
  limit(ownMs: number): number {
    return Math.max(1, Math.min(ownMs, this.deadline - this.now()));
  }

  /**
   * Whether a wait given {@link limit}`(ownMs)` ended because the budget, not its own limit, ran out:
   * the budget cut it short and is spent (within `slackMs`, for timers that fire a little early).
   */
  cutShort(ownMs: number, limitMs: number, slackMs = 5): boolean {
    return limitMs < ownMs && this.now() >= this.deadline - slackMs;
  }
}

/** A piece of work outlived the limit {@link withTimeLimit} gave it. */
export class TimeLimitExceededError extends Error {
  constructor(readonly limitMs: number) {
    super(`did not finish within ${limitMs} ms`);
  }
}

/**
 * `work`, or a {@link TimeLimitExceededError} once `limitMs` ms have passed (for calls without a
 * time limit of their own: `page.evaluate`, a DevTools command). The work itself goes on; its late
 * failure is ignored.
 */
export function withTimeLimit<T>(work: Promise<T>, limitMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  work.catch(() => undefined);
  const limit = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new TimeLimitExceededError(limitMs)), limitMs)));
  return Promise.race([work, limit]).finally(() => clearTimeout(timer));
}
