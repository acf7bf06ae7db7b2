import { applyDecorators } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';
import { ErrorEnvelopeDto } from './error-envelope';

/** Codes a status can carry, as documented on each route (spec 7.3 and CONTRACT.md). */
const CODES_BY_STATUS: Record<number, { description: string; codes: string[] }> = {
  400: { description: 'Invalid request', codes: ['VALIDATION_FAILED', 'INVALID_JSON', 'TARGET_NOT_ALLOWED', 'INVALID_IDEMPOTENCY_KEY', 'INVALID_ORGANIZATION_ID'] },
  401: { description: 'Missing, unknown or revoked API key', codes: ['UNAUTHENTICATED', 'INVALID_API_KEY', 'API_KEY_REVOKED'] },
  404: { description: 'Unknown id, or an id of another account', codes: ['NOT_FOUND'] },
  409: { description: 'A request with the same Idempotency-Key is still running', codes: ['IDEMPOTENCY_IN_FLIGHT'] },
  413: { description: 'Body too large', codes: ['PAYLOAD_TOO_LARGE'] },
  415: { description: 'Body is not JSON', codes: ['UNSUPPORTED_MEDIA_TYPE'] },
  422: { description: 'Idempotency-Key reused with a different body', codes: ['IDEMPOTENCY_KEY_REUSED'] },
  429: { description: 'Monthly quota reached', codes: ['PLAN_QUOTA_EXCEEDED'] },
  500: { description: 'Unexpected failure', codes: ['INTERNAL_ERROR'] },
};

/** Documents error responses (envelope schema and possible codes) for the given statuses. */
export function ApiErrorResponses(...statuses: number[]) {
  return applyDecorators(
    ...statuses.map((status) =>
      ApiResponse({
        status,
        description: `${CODES_BY_STATUS[status].description}. Codes: ${CODES_BY_STATUS[status].codes.join(', ')}`,
        type: ErrorEnvelopeDto,
      }),
    ),
  );
}
