import type { ErrorEnvelope } from './types';

/**
 * A non-2xx answer from the API. `code` is the envelope's stable machine code (for example
 * `NOT_FOUND`); `requestId` is the `X-Request-ID` to quote in support requests.
 */
export class GlimpseApiError extends Error {
  readonly code: string;
  readonly requestId: string | undefined;
  readonly details: Record<string, unknown> | undefined;

  constructor(
    readonly status: number,
    body: Partial<ErrorEnvelope> | undefined,
    readonly headers?: Headers,
  ) {
    super(body?.error ?? `HTTP ${status}`);
    this.name = 'GlimpseApiError';
    this.code = body?.code ?? 'UNKNOWN';
    this.requestId = body?.requestId ?? headers?.get('x-request-id') ?? undefined;
    this.details = body?.details;
  }
}

/** `waitForScreenshot` ran out of time (or was aborted) before the job reached `done` or `failed`. */
export class GlimpseTimeoutError extends Error {
  constructor(
    message: string,
    readonly lastStatus: string | undefined,
  ) {
    super(message);
    this.name = 'GlimpseTimeoutError';
  }
}
