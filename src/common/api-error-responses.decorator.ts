import { applyDecorators } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';
import type { HeadersObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { ErrorEnvelopeDto } from './error-envelope';
import {
  AUTHENTICATED_RESPONSE_HEADERS,
  REQUEST_ID_RESPONSE_HEADER,
  RETRY_AFTER_RESPONSE_HEADER,
} from './operational-headers';

/**
 * Codes a status can carry, as documented on each route (spec 7.3 and CONTRACT.md), and its headers:
 * statuses answered after authentication carry the rate-limit headers; 401 and the body-parsing
 * statuses (413, 415), answered before a key is known, carry only the request id.
 */
const CODES_BY_STATUS: Record<number, { description: string; codes: string[]; headers: HeadersObject }> = {
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
  415: { description: 'Body is not JSON', codes: ['UNSUPPORTED_MEDIA_TYPE'], headers: REQUEST_ID_RESPONSE_HEADER },
  422: {
    description: 'Idempotency-Key reused with a different body',
    codes: ['IDEMPOTENCY_KEY_REUSED'],
    headers: AUTHENTICATED_RESPONSE_HEADERS,
  },
  429: {
    description: 'Monthly quota reached; details { used, limit, plan, resetAt }',
    codes: ['PLAN_QUOTA_EXCEEDED'],
    headers: { ...AUTHENTICATED_RESPONSE_HEADERS, ...RETRY_AFTER_RESPONSE_HEADER },
  },
  500: { description: 'Unexpected failure', codes: ['INTERNAL_ERROR'], headers: AUTHENTICATED_RESPONSE_HEADERS },
};

/** Documents error responses (envelope schema, possible codes and headers) for the given statuses. */
export function ApiErrorResponses(...statuses: number[]) {
  return applyDecorators(
    ...statuses.map((status) =>
      ApiResponse({
        status,
        description: `${CODES_BY_STATUS[status].description}. Codes: ${CODES_BY_STATUS[status].codes.join(', ')}`,
        type: ErrorEnvelopeDto,
        headers: CODES_BY_STATUS[status].headers,
      }),
    ),
  );
}
