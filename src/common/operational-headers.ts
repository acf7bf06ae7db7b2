import type { HeadersObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { REQUEST_ID_PATTERN } from './request-id';

/**
 * Operational response headers (spec section 7.1, CONTRACT.md "Operational headers"): their names,
 * used where they are set, and their OpenAPI descriptions, used by the route decorators.
 */
export const HEADER = {
  requestId: 'X-Request-ID',
  rateLimitLimit: 'X-RateLimit-Limit',
  rateLimitRemaining: 'X-RateLimit-Remaining',
  rateLimitReset: 'X-RateLimit-Reset',
  rateLimitPolicy: 'X-RateLimit-Policy',
  retryAfter: 'Retry-After',
  idempotencyReplayed: 'Idempotency-Replayed',
} as const;

/** `X-RateLimit-Policy` value of a `legacy_free` key. */
export const LEGACY_FREE_POLICY = 'legacy-free-grandfathered';

/** `X-Request-ID`: on every `/v1` response. */
export const REQUEST_ID_RESPONSE_HEADER: HeadersObject = {
  [HEADER.requestId]: {
    description: 'The request id: the incoming `X-Request-ID` when it matches `[A-Za-z0-9_-]{8,64}`, else `req_<random>`',
    required: true,
    schema: { type: 'string', pattern: REQUEST_ID_PATTERN.source, example: 'req_4kq1Jd0aZxY2mNw8PqRs' },
  },
};

/** `X-RateLimit-*`: on every response to an authenticated `/v1` request (not on 401s, where no key is known). */
export const RATE_LIMIT_RESPONSE_HEADERS: HeadersObject = {
  [HEADER.rateLimitLimit]: {
    description: "Monthly screenshot cap of the key's plan",
    schema: { type: 'integer', minimum: 0 },
  },
  [HEADER.rateLimitRemaining]: {
    description: 'Cap minus usage in the current calendar month (UTC), never below 0',
    schema: { type: 'integer', minimum: 0 },
  },
  [HEADER.rateLimitReset]: {
    description: 'Unix seconds when usage resets: the 1st of next month, 00:00 UTC',
    schema: { type: 'integer' },
  },
  [HEADER.rateLimitPolicy]: {
    description: `\`${LEGACY_FREE_POLICY}\`, only for a key on the pre-cutover free allowance (plan \`legacy_free\`)`,
    schema: { type: 'string', enum: [LEGACY_FREE_POLICY] },
  },
};

/** Headers of a response to an authenticated request: request id and rate-limit hints. */
export const AUTHENTICATED_RESPONSE_HEADERS: HeadersObject = { ...REQUEST_ID_RESPONSE_HEADER, ...RATE_LIMIT_RESPONSE_HEADERS };

/** `Retry-After`: only on a 429. */
export const RETRY_AFTER_RESPONSE_HEADER: HeadersObject = {
  [HEADER.retryAfter]: {
    description:
      'Whole seconds to wait before retrying: until the monthly quota resets (`PLAN_QUOTA_EXCEEDED`), until the next one-second window (`RATE_LIMITED`), or a short back-off (`TOO_MANY_PENDING_JOBS`)',
    required: true,
    schema: { type: 'integer', minimum: 1 },
  },
};

/** `Retry-After` on a 503 `SERVICE_UNAVAILABLE` (CONTRACT.md, "Rate limits and back-pressure"). */
export const SERVICE_UNAVAILABLE_RETRY_AFTER_HEADER: HeadersObject = {
  [HEADER.retryAfter]: { description: 'Seconds to wait before retrying', required: true, schema: { type: 'integer', minimum: 1 } },
};

/** `Idempotency-Replayed`: on a stored response replayed for a retried `Idempotency-Key`. */
export const IDEMPOTENCY_REPLAYED_RESPONSE_HEADER: HeadersObject = {
  [HEADER.idempotencyReplayed]: {
    description: '`true` when this is the stored response of an earlier request with the same `Idempotency-Key`',
    schema: { type: 'string', enum: ['true'] },
  },
};
