import { Logger } from '@nestjs/common';
import { backOff } from 'exponential-backoff';
import { isDependencyUnavailable } from '../common/dependency-errors';

/** First wait before retrying a state write, ms; doubled each time up to {@link STATE_WRITE_MAX_DELAY_MS}. */
export const STATE_WRITE_FIRST_DELAY_MS = 250;
/** Longest wait between two tries of a state write, ms. */
export const STATE_WRITE_MAX_DELAY_MS = 10_000;

/** Thrown by {@link retryStateWrite} when `signal` aborted it (the process is shutting down). */
export class StateWriteAborted extends Error {
  constructor(what: string) {
    super(`${what}: not written, the process is stopping`);
  }
}

/**
 * Runs a state write of a worker (claiming a job, ending it) and retries it with exponential back-off
 * (from {@link STATE_WRITE_FIRST_DELAY_MS} up to {@link STATE_WRITE_MAX_DELAY_MS} between tries, with
 * jitter) for as long as PostgreSQL is unreachable, so a failed write is retried, never dropped
 * (CONTRACT.md, "Durability"). Other errors are thrown at once. Stops, throwing {@link StateWriteAborted},
 * when `signal` aborts: the row then stays as it was and the reconciler or the stuck-job sweep takes it.
 * `what` names the write in logs (e.g. `claim scr_…`).
 */
export async function retryStateWrite<T>(what: string, write: () => Promise<T>, logger: Logger, signal?: AbortSignal): Promise<T> {
  let aborted = false;
  try {
    return await backOff(write, {
      numOfAttempts: Number.POSITIVE_INFINITY,
      startingDelay: STATE_WRITE_FIRST_DELAY_MS,
      maxDelay: STATE_WRITE_MAX_DELAY_MS,
      timeMultiple: 2,
      jitter: 'full',
      retry: (err: unknown, attempt: number) => {
        if (!isDependencyUnavailable(err)) return false;
        if (signal?.aborted) {
          aborted = true;
          return false;
        }
        if (attempt === 1 || attempt % 10 === 0)
          logger.warn(`${what}: database unreachable, retrying (try ${attempt}): ${(err as Error).message}`);
        return true;
      },
    });
  } catch (err) {
    if (aborted) throw new StateWriteAborted(what);
    throw err;
  }
}
