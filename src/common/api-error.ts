/**
 * Stable machine codes of the error envelope: the spec's table (section 7.3) plus CONTRACT.md,
 * "Error codes beyond the spec's table". Clients treat unknown codes as transient.
 */
export const ErrorCode = {
  UNAUTHENTICATED: 'UNAUTHENTICATED',
  INVALID_API_KEY: 'INVALID_API_KEY',
  API_KEY_REVOKED: 'API_KEY_REVOKED',
  VALIDATION_FAILED: 'VALIDATION_FAILED',
  INVALID_JSON: 'INVALID_JSON',
  INVALID_ORGANIZATION_ID: 'INVALID_ORGANIZATION_ID',
  INVALID_IDEMPOTENCY_KEY: 'INVALID_IDEMPOTENCY_KEY',
  IDEMPOTENCY_IN_FLIGHT: 'IDEMPOTENCY_IN_FLIGHT',
  IDEMPOTENCY_KEY_REUSED: 'IDEMPOTENCY_KEY_REUSED',
  UNSUPPORTED_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  PAYLOAD_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  NOT_FOUND: 'NOT_FOUND',
  ROUTE_NOT_FOUND: 'ROUTE_NOT_FOUND',
  TARGET_NOT_ALLOWED: 'TARGET_NOT_ALLOWED',
  PLAN_QUOTA_EXCEEDED: 'PLAN_QUOTA_EXCEEDED',
  DELIVERY_IN_PROGRESS: 'DELIVERY_IN_PROGRESS',
  RATE_LIMITED: 'RATE_LIMITED',
  TOO_MANY_PENDING_JOBS: 'TOO_MANY_PENDING_JOBS',
  RUN_ALREADY_ENDED: 'RUN_ALREADY_ENDED',
  PLAN_LIMIT_REACHED: 'PLAN_LIMIT_REACHED',
  ORGANIZATION_MISMATCH: 'ORGANIZATION_MISMATCH',
  INTERNAL_ERROR: 'INTERNAL_ERROR',
  SERVICE_UNAVAILABLE: 'SERVICE_UNAVAILABLE',
  INVALID_SIGNATURE: 'INVALID_SIGNATURE',
  RENDER_LINK_EXPIRED: 'RENDER_LINK_EXPIRED',
  HOST_NOT_ALLOWED: 'HOST_NOT_ALLOWED',
  CAPTURE_FAILED: 'CAPTURE_FAILED',
  URI_TOO_LONG: 'URI_TOO_LONG',
  RENDER_PENDING: 'RENDER_PENDING',
  PROFILE_DOMAIN_NOT_ALLOWED: 'PROFILE_DOMAIN_NOT_ALLOWED',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** One invalid field in `details.fields` of a `VALIDATION_FAILED` error. */
export interface FieldError {
  field: string;
  message: string;
}

/**
 * The one error type of the service. The global filter renders it as the envelope
 * `{ error, code, requestId, details? }` (spec section 7.2) with `status` as the HTTP status,
 * and sets `headers` (for example `Retry-After`) on the response.
 */
export class ApiError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly status: number,
    message: string,
    readonly details?: Record<string, unknown>,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }

  /** 404 `NOT_FOUND`, the same for an unknown id and for another account's id. */
  static notFound(what: string): ApiError {
    return new ApiError(ErrorCode.NOT_FOUND, 404, `${what} not found`);
  }

  /** 400 `VALIDATION_FAILED` with `details.fields`. */
  static validation(fields: FieldError[]): ApiError {
    const summary = fields.map((f) => `${f.field}: ${f.message}`).join('; ');
    return new ApiError(ErrorCode.VALIDATION_FAILED, 400, `Request validation failed: ${summary}`, { fields });
  }
}
