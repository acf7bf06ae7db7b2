import { QueryRunnerAlreadyReleasedError, QueryRunnerProviderAlreadyReleasedError } from 'typeorm';

/** Network error codes of a connection that could not be made or was lost (Node's `net`). */
const CONNECTION_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ENOTFOUND',
]);

/**
 * SQLSTATEs meaning the server cannot serve right now: class 08 (connection exception), 57P01–57P03
 * (shutting down, crashed, starting up), 53300 (too many connections).
 */
const UNAVAILABLE_SQLSTATE = /^(08...|57P0[123]|53300)$/;

/** Messages of node-postgres (`pg`, `pg-pool`) for a connection lost, refused or timed out. */
const PG_CONNECTION_MESSAGES = [
  /connection terminated/i,
  /timeout exceeded when trying to connect/i,
  /not queryable/i,
  /connection (?:is )?closed/i,
  /terminating connection/i,
];

/**
 * Whether `err` means PostgreSQL (or another dependency of a request) cannot be reached right now,
 * rather than that the request or the code is wrong: the answer is then 503 `SERVICE_UNAVAILABLE`
 * with `Retry-After` (CONTRACT.md, "Rate limits and back-pressure"), never a 500. Looks through
 * TypeORM's `QueryFailedError` (`driverError`) and `AggregateError`s (a refused connection to every
 * address of `localhost`), and counts TypeORM's `QueryRunner(Provider)AlreadyReleasedError` (the
 * connection broke between two queries of a transaction) as unreachable.
 */
export function isDependencyUnavailable(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== 'object' || depth > 4) return false;
  // TypeORM lets go of a connection that broke between two queries of a transaction; the next query says so.
  if (err instanceof QueryRunnerAlreadyReleasedError || err instanceof QueryRunnerProviderAlreadyReleasedError) return true;
  const e = err as { code?: unknown; message?: unknown; driverError?: unknown; errors?: unknown; cause?: unknown };
  if (typeof e.code === 'string' && (CONNECTION_ERROR_CODES.has(e.code) || UNAVAILABLE_SQLSTATE.test(e.code))) return true;
  if (typeof e.message === 'string' && PG_CONNECTION_MESSAGES.some((pattern) => pattern.test(e.message as string))) return true;
  if (Array.isArray(e.errors) && e.errors.some((inner) => isDependencyUnavailable(inner, depth + 1))) return true;
  return isDependencyUnavailable(e.driverError, depth + 1) || isDependencyUnavailable(e.cause, depth + 1);
}

/** `Retry-After` seconds sent with a 503 `SERVICE_UNAVAILABLE`. */
export const SERVICE_UNAVAILABLE_RETRY_AFTER_S = 5;
