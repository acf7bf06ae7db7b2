import { applyDecorators } from '@nestjs/common';
import { ApiExtraModels, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import type { HeadersObject, SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { LIMITED_RESOURCES, PLANS } from '../accounts/plan';
import { ErrorCode } from './api-error';
import { ErrorEnvelopeDto } from './error-envelope';
import {
  AUTHENTICATED_RESPONSE_HEADERS,
  REQUEST_ID_RESPONSE_HEADER,
  RETRY_AFTER_RESPONSE_HEADER,
  SERVICE_UNAVAILABLE_RETRY_AFTER_HEADER,
} from './operational-headers';

/** Error statuses a route can document. */
export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 415 | 422 | 429 | 500 | 503;

interface StatusDefaults {
  description: string;
  codes: ErrorCode[];
  headers: HeadersObject;
}

/**
 * The shape of `details` for codes that always carry it (spec 7.2 for `PLAN_QUOTA_EXCEEDED`,
 * CONTRACT.md "Rate limits and back-pressure" for the others). A response listing several of these
 * codes documents one `details` shape per code (`oneOf` keyed on `code`).
 */
export const DETAILS_BY_CODE: Partial<Record<ErrorCode, SchemaObject>> = {
  PLAN_QUOTA_EXCEEDED: {
    type: 'object',
    required: ['used', 'limit', 'plan', 'resetAt'],
    properties: {
      used: { type: 'integer', description: 'Screenshots used this month by the key' },
      limit: { type: 'integer', description: 'Monthly cap of the plan' },
      plan: { type: 'string', enum: [...PLANS] },
      resetAt: { type: 'string', format: 'date-time', description: '00:00 UTC on the 1st of next month' },
    },
  },
  RATE_LIMITED: {
    type: 'object',
    required: ['limit', 'windowSeconds'],
    properties: {
      limit: { type: 'integer', description: 'Requests allowed per window for this API key (`RATE_LIMIT_PER_SECOND`; bursts up to twice that)' },
      windowSeconds: { type: 'integer', description: 'Length of the window, seconds (1)' },
    },
  },
  PLAN_LIMIT_REACHED: {
    type: 'object',
    required: ['resource', 'limit', 'plan'],
    properties: {
      resource: { type: 'string', enum: [...LIMITED_RESOURCES], description: 'What the plan limits the number of' },
      limit: { type: 'integer', description: 'How many of it the plan allows' },
      plan: { type: 'string', enum: [...PLANS] },
    },
  },
  TOO_MANY_PENDING_JOBS: {
    type: 'object',
    required: ['limit', 'pending'],
    properties: {
      limit: { type: 'integer', description: 'Jobs and runs not yet ended that the account may have (`MAX_PENDING_JOBS_PER_ACCOUNT`)' },
      pending: { type: 'integer', description: 'Jobs and runs of the account not yet ended' },
    },
  },
};

/**
 * One `details` schema for several codes of {@link DETAILS_BY_CODE}: every field of each (a field of
 * several codes described per code), required when every code requires it. (A `oneOf` keyed on `code`
 * would be more exact, but example validators and generated clients handle it unevenly.)
 */
function mergedDetails(codes: ErrorCode[]): SchemaObject {
  const properties: Record<string, SchemaObject> = {};
  const describedBy: Record<string, string[]> = {};
  for (const code of codes) {
    for (const [name, prop] of Object.entries(DETAILS_BY_CODE[code]!.properties ?? {}) as [string, SchemaObject][]) {
      properties[name] ??= { ...prop };
      (describedBy[name] ??= []).push(`${code}: ${prop.description ?? name}`);
    }
  }
  for (const [name, descriptions] of Object.entries(describedBy)) properties[name].description = descriptions.join('; ');
  const required = codes
    .map((c) => DETAILS_BY_CODE[c]!.required ?? [])
    .reduce((common, next) => common.filter((name) => next.includes(name)));
  return { type: 'object', description: 'Fields depend on `code`', required, properties };
}

/** Example `details` per code, for the documented examples. */
const DETAILS_EXAMPLES: Partial<Record<ErrorCode, Record<string, unknown>>> = {
  PLAN_QUOTA_EXCEEDED: { used: 100, limit: 100, plan: 'free', resetAt: '2026-12-01T00:00:00.000Z' },
  RATE_LIMITED: { limit: 20, windowSeconds: 1 },
  TOO_MANY_PENDING_JOBS: { limit: 10000, pending: 10000 },
  PLAN_LIMIT_REACHED: { resource: 'webhook_endpoints', limit: 2, plan: 'free' },
};

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
  403: {
    description: "X-Organization-ID names another organization than the API key's account",
    codes: ['ORGANIZATION_MISMATCH'],
    headers: AUTHENTICATED_RESPONSE_HEADERS,
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
    description:
      'Monthly quota reached, too many jobs not yet ended, or too many requests per second; retry after `Retry-After` seconds',
    codes: ['PLAN_QUOTA_EXCEEDED', 'TOO_MANY_PENDING_JOBS', 'RATE_LIMITED'],
    headers: { ...AUTHENTICATED_RESPONSE_HEADERS, ...RETRY_AFTER_RESPONSE_HEADER },
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
 * get typed codes), its headers, an example, and `details` per code where {@link DETAILS_BY_CODE}
 * fixes its shape. Pass a bare status for the defaults of {@link ERROR_CODES_BY_STATUS}, or
 * `{ status, codes }` to list the route's own codes.
 *
 * @example `@ApiErrorResponses({ status: 400, codes: ['VALIDATION_FAILED', 'INVALID_JSON'] }, 401, 500)`
 */
export function ApiErrorResponses(...specs: (ErrorStatus | ErrorResponseSpec)[]) {
  return applyDecorators(ApiExtraModels(ErrorEnvelopeDto), ...specs.map((spec) => ApiResponse(errorResponseOptions(spec))));
}

/**
 * The documentation of one error status: description, headers, the envelope schema with `code`
 * narrowed to the given codes (and, for codes of {@link DETAILS_BY_CODE}, `details` in that shape; for
 * several such codes, one object with the fields of each, described per code), and an example.
 * Used by {@link ApiErrorResponses}, and by the document builder for pipeline-wide errors.
 */
export function errorResponseOptions(spec: ErrorStatus | ErrorResponseSpec) {
  const { status, codes, description, headers } =
    typeof spec === 'number' ? { status: spec, ...ERROR_CODES_BY_STATUS[spec] } : { ...ERROR_CODES_BY_STATUS[spec.status], ...spec };
  const withDetails = codes.filter((c) => DETAILS_BY_CODE[c]);
  const codeSchema = { type: 'string' as const, enum: [...codes] };
  let narrowed: SchemaObject;
  if (withDetails.length === 0) {
    narrowed = { type: 'object', required: ['code'], properties: { code: codeSchema } };
  } else if (codes.length === 1) {
    narrowed = { type: 'object', required: ['code', 'details'], properties: { code: codeSchema, details: DETAILS_BY_CODE[codes[0]]! } };
  } else {
    narrowed = {
      type: 'object',
      required: withDetails.length === codes.length ? ['code', 'details'] : ['code'],
      properties: { code: codeSchema, details: mergedDetails(withDetails) },
    };
  }
  const example = {
    error: description,
    code: codes[0],
    requestId: 'req_4kq1Jd0aZxY2mNw8PqRs',
    ...(DETAILS_EXAMPLES[codes[0]] ? { details: DETAILS_EXAMPLES[codes[0]] } : {}),
  };
  return {
    status,
    description: `${description}. Codes: ${codes.join(', ')}`,
    headers,
    schema: { allOf: [{ $ref: getSchemaPath(ErrorEnvelopeDto) }, narrowed] },
    example,
  };
}
