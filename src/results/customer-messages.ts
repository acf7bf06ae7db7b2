/*
 * The customer-safe messages of a failed job (CONTRACT.md, "Error codes beyond the spec's table": no stack
 * trace, no SQL, no internal message): the fixed texts for internal failures and the marker class of a message the
 * service wrote for customers. Shared by the screenshot job lifecycle, which ends jobs, and the features
 * that explain a failure to it (storage delivery, the sweeps); imports nothing.
 */

/** The job's `error` when the result could not be written to storage. */
export const STORAGE_FAILURE_MESSAGE = 'internal error: the result could not be stored; please retry';
/** The job's `error` for any other internal failure (database, unexpected exception). */
export const INTERNAL_FAILURE_MESSAGE = 'internal error: the capture could not be completed; please retry';

/**
 * A message the service wrote for customers (e.g. "capture did not finish: the worker stopped"): a job
 * failed with it shows `text` (paths redacted, at most 500 characters) as its `error`.
 */
export class CustomerMessage {
  constructor(readonly text: string) {}
}
