import type { Request } from 'express';
import { ApiError } from '../common/api-error';
import type { SignedIn } from './dashboard-sessions.service';

/** Session cookie name; `Path=/dashboard`, HttpOnly, SameSite=Lax, Secure on https. */
export const SESSION_COOKIE = 'glimpse_session';
/** Double-submit CSRF cookie of signed-out forms (sign-in, sign-up, set password). */
export const ANONYMOUS_CSRF_COOKIE = 'glimpse_csrf';
/** Name of the hidden CSRF field of every dashboard form. */
export const CSRF_FIELD = '_csrf';

/** What the dashboard middleware attaches to a request. */
export interface DashboardContext {
  /** Null when signed out. */
  signedIn: SignedIn | null;
  /** The token forms must carry: the session's, or the anonymous cookie's when signed out. */
  csrfToken: string;
  /** Raw session cookie token, when one was presented. */
  sessionToken: string | null;
}

/** An Express request that went through the dashboard middleware. */
export type DashboardRequest = Request & { dashboard: DashboardContext };

/** Thrown when a page needs a session; the dashboard filter answers 303 to the sign-in page. */
export class SignInRequired extends Error {}

/** Thrown for a page or action the dashboard answers with an error page (`status` 403, 404, 429). */
export class DashboardError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    message: string,
  ) {
    super(message);
  }

  static notFound(): DashboardError {
    return new DashboardError(404, 'Not found', 'There is nothing here, or it belongs to another account.');
  }
}

/**
 * Rethrows `err`, an error of one of the REST API's services scoped to the signed-in account, as the
 * dashboard's 404 page ({@link DashboardError.notFound}, docs/dashboard.md) when it is an `ApiError`
 * whose status is in `statuses` (default 404: another account's id, or none); any other error as it is.
 * Fits `promise.catch(rethrowAsNotFoundPage)`.
 */
export function rethrowAsNotFoundPage(err: unknown, statuses: readonly number[] = [404]): never {
  if (err instanceof ApiError && statuses.includes(err.status)) throw DashboardError.notFound();
  throw err;
}

/** Runs `action` and turns its 404 `ApiError` into the dashboard's 404 page ({@link rethrowAsNotFoundPage}). */
export async function notFoundAsPage<T>(action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (err) {
    rethrowAsNotFoundPage(err);
  }
}
