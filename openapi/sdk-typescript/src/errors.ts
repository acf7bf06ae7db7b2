import type { operations } from './generated/schema';
import type { ErrorEnvelope } from './types';

type ErrorBody<O> = O extends { responses: infer R }
  ? {
      [S in keyof R]: S extends 200 | 201 | 202 | 204 ? never : R[S] extends { content: { 'application/json': infer B } } ? B : never;
    }[keyof R]
  : never;

/**
 * Every `code` an API route documents for its error answers (OpenAPI document, each operation's
 * 4xx/5xx responses; docs/CONTRACT.md "Error codes"), e.g. `VALIDATION_FAILED`, `NOT_FOUND`, `RATE_LIMITED`.
 */
export type GlimpseApiErrorCode = ErrorBody<operations[keyof operations]> extends { code: infer C } ? C : never;

/**
 * Codes the SDK itself gives to failures without an API answer: `CONNECTION_ERROR` (the request did
 * not reach the API, after the retries), `TIMEOUT` (an attempt exceeded `timeoutMs`, or `waitFor`
 * its deadline), `JOB_FAILED` (`capture` of a job that ended `failed`), `DOWNLOAD_FAILED` (a result
 * URL answered non-2xx, e.g. 404 after the retention period).
 */
export type GlimpseClientErrorCode = 'CONNECTION_ERROR' | 'TIMEOUT' | 'JOB_FAILED' | 'DOWNLOAD_FAILED';

/** A documented code, or one the service adds later (treat unknown codes as transient: README "Errors"). */
export type GlimpseErrorCode = GlimpseApiErrorCode | GlimpseClientErrorCode | (string & {});

/**
 * Every error the SDK throws (except the caller's own `AbortSignal` reason, which is rethrown as it is).
 * For an API answer: `status` is the HTTP status, `code` the envelope's stable machine code, `requestId`
 * the `X-Request-ID` to quote in support requests, `details` the envelope's context (e.g.
 * `details.fields` of `VALIDATION_FAILED`, `details.resetAt` of `PLAN_QUOTA_EXCEEDED`). For failures
 * without an answer, `status` is 0 and `code` a {@link GlimpseClientErrorCode}.
 */
export class GlimpseError extends Error {
  override name = 'GlimpseError';
  readonly status: number;
  readonly code: GlimpseErrorCode;
  readonly requestId: string | undefined;
  readonly details: Record<string, unknown> | undefined;
  /** Response headers of the answer (e.g. `Retry-After`, `X-RateLimit-Remaining`), when there was one. */
  readonly headers: Headers | undefined;

  constructor(init: {
    message: string;
    status: number;
    code: GlimpseErrorCode;
    requestId?: string;
    details?: Record<string, unknown>;
    headers?: Headers;
    cause?: unknown;
  }) {
    super(
      init.requestId ? `${init.message} (request ${init.requestId})` : init.message,
      init.cause === undefined ? undefined : { cause: init.cause },
    );
    this.status = init.status;
    this.code = init.code;
    this.requestId = init.requestId;
    this.details = init.details;
    this.headers = init.headers;
  }

  /** The error of a non-2xx answer whose body (already parsed, or text) should be the error envelope. */
  static fromResponse(response: Response, body: unknown): GlimpseError {
    const envelope = (body && typeof body === 'object' ? body : {}) as Partial<ErrorEnvelope>;
    return new GlimpseError({
      message: typeof envelope.error === 'string' ? envelope.error : `HTTP ${response.status}`,
      status: response.status,
      code: typeof envelope.code === 'string' ? envelope.code : `HTTP_${response.status}`,
      requestId: envelope.requestId ?? response.headers.get('x-request-id') ?? undefined,
      details: envelope.details,
      headers: response.headers,
    });
  }
}

/** The request did not reach the API (DNS, refused or reset connection), also after every retry. `cause` holds the last failure. */
export class GlimpseConnectionError extends GlimpseError {
  override name = 'GlimpseConnectionError';
  constructor(message: string, cause: unknown) {
    super({ message, status: 0, code: 'CONNECTION_ERROR', cause });
  }
}

/**
 * An attempt took longer than `timeoutMs` (after every retry), or `waitFor` passed its deadline.
 * `lastStatus` is the last status seen while waiting.
 */
export class GlimpseTimeoutError extends GlimpseError {
  override name = 'GlimpseTimeoutError';
  constructor(
    message: string,
    readonly lastStatus?: string,
  ) {
    super({ message, status: 0, code: 'TIMEOUT' });
  }
}
