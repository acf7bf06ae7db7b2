import { applyDecorators } from '@nestjs/common';
import { ApiExtraModels, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import type { HeadersObject, SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { PLANS } from '../accounts/plan';
import { ErrorCode } from './api-error';
import { ErrorEnvelopeDto } from './error-envelope';
import {
  AUTHENTICATED_RESPONSE_HEADERS,
  REQUEST_ID_RESPONSE_HEADER,
  RETRY_AFTER_RESPONSE_HEADER,
  SERVICE_UNAVAILABLE_RETRY_AFTER_HEADER,
} from './operational-headers';

/** Error statuses a route can document. */
export type ErrorStatus = 400 | 401 | 404 | 409 | 413 | 415 | 422 | 429 | 500 | 503;

interface StatusDefaults {
  description: string;
  codes: ErrorCode[];
  headers: HeadersObject;
  /** Schema of `details` when the status gives it a fixed shape. */
  details?: SchemaObject;
}

/**
 * Codes a status can carry unless a route narrows them (spec 7.3 and CONTRACT.md), and its headers:
 * statuses answered after authentication carry the rate-limit headers; 401 and the body-parsing
 * statuses (413, 415), answered before a key is known, carry only the request id.
 */
export const ERROR_CODES_BY_STATUS: Record<ErrorStatus, StatusDefaults> = {
  400: {
    description: 'Invalid request',
    codes: ['VALIDATION_FAILED', 'INVALID_JSON', 'TARGET_NOT_ALLOWED', 'INVALID_IDEMPOTENCY_KEY', 'INVALID_ORGANIZATION_ID'],
    headers: AUTHENTICATED_RESPONSE_HEADERS,
  },
  401: {
    description: 'Missing, unknown or revoked API key',
    codes: ['UNAUTHENTICATED', 'INVALID_API_KEY', 'API_KEY_REVOKED'],
    headers: REQUEST_ID_RESPONSE_HEADER,
  },
  404: { description: 'Unknown id, or an id of another account', codes: ['NOT_FOUND'], headers: AUTHENTICATED_RESPONSE_HEADERS },
  409: {
    description: 'A request with the same Idempotency-Key is still running',
    codes: ['IDEMPOTENCY_IN_FLIGHT'],
    headers: AUTHENTICATED_RESPONSE_HEADERS,
  },
  413: { description: 'Body too large', codes: ['PAYLOAD_TOO_LARGE'], headers: REQUEST_ID_RESPONSE_HEADER },
  415: { description: 'Body is not of a supported media type', codes: ['UNSUPPORTED_MEDIA_TYPE'], headers: REQUEST_ID_RESPONSE_HEADER },
  422: {
    description: 'Idempotency-Key reused with a different body',
    codes: ['IDEMPOTENCY_KEY_REUSED'],
    headers: AUTHENTICATED_RESPONSE_HEADERS,
  },
  429: {
    description: 'Monthly quota reached; retry after `Retry-After` seconds',
    codes: ['PLAN_QUOTA_EXCEEDED'],
    headers: { ...AUTHENTICATED_RESPONSE_HEADERS, ...RETRY_AFTER_RESPONSE_HEADER },
    details: {
      type: 'object',
      required: ['used', 'limit', 'plan', 'resetAt'],
      properties: {
        used: { type: 'integer', description: 'Screenshots used this month by the key' },
        limit: { type: 'integer', description: 'Monthly cap of the plan' },
        plan: { type: 'string', enum: [...PLANS] },
        resetAt: { type: 'string', format: 'date-time', description: '00:00 UTC on the 1st of next month' },
      },
    },
  },
  500: { description: 'Unexpected failure', codes: ['INTERNAL_ERROR'], headers: AUTHENTICATED_RESPONSE_HEADERS },
  503: {
    description: 'PostgreSQL cannot be reached right now; nothing was accepted or counted; retry after `Retry-After` seconds',
    codes: ['SERVICE_UNAVAILABLE'],
    headers: { ...REQUEST_ID_RESPONSE_HEADER, ...SERVICE_UNAVAILABLE_RETRY_AFTER_HEADER },
  },
};

/** A status with the exact codes this route can return for it (instead of the defaults). */
export interface ErrorResponseSpec {
  status: ErrorStatus;
  codes: ErrorCode[];
  description?: string;
}

/**
 * Documents error responses: each status gets the envelope schema {@link ErrorEnvelopeDto} with its
 * `code` narrowed to an enum of the codes the route can return for that status (so generated clients
 * get typed codes), its headers, an example, and `details` where the status fixes its shape (429).
 * Pass a bare status for the defaults of {@link ERROR_CODES_BY_STATUS}, or `{ status, codes }` to list
 * the route's own codes.
 *
 * @example `@ApiErrorResponses({ status: 400, codes: ['VALIDATION_FAILED', 'INVALID_JSON'] }, 401, 500)`
 */
export function ApiErrorResponses(...specs: (ErrorStatus | ErrorResponseSpec)[]) {
  return applyDecorators(ApiExtraModels(ErrorEnvelopeDto), ...specs.map((spec) => ApiResponse(errorResponseOptions(spec))));
}

/**
 * The documentation of one error status: description, headers, the envelope schema with `code`
 * narrowed to the given codes (and `details` where the status fixes its shape), and an example.
 * Used by {@link ApiErrorResponses}, and by the document builder for pipeline-wide errors.
 */
export function errorResponseOptions(spec: ErrorStatus | ErrorResponseSpec) {
  const { status, codes, description, headers, details } =
    typeof spec === 'number' ? { status: spec, ...ERROR_CODES_BY_STATUS[spec] } : { ...ERROR_CODES_BY_STATUS[spec.status], ...spec };
  return {
    status,
    description: `${description}. Codes: ${codes.join(', ')}`,
    headers,
    schema: {
      allOf: [
        { $ref: getSchemaPath(ErrorEnvelopeDto) },
        {
          type: 'object' as const,
          required: details ? ['code', 'details'] : ['code'],
          properties: { code: { type: 'string' as const, enum: [...codes] }, ...(details ? { details } : {}) },
        },
      ],
    },
    example: {
      error: description,
      code: codes[0],
      requestId: 'req_4kq1Jd0aZxY2mNw8PqRs',
      ...(status === 429 ? { details: { used: 100, limit: 100, plan: 'free', resetAt: '2026-12-01T00:00:00.000Z' } } : {}),
    },
  };
}
