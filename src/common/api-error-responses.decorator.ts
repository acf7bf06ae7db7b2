import { applyDecorators } from '@nestjs/common';
import { ApiExtraModels, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import type { HeadersObject, SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { ErrorCode } from './api-error';
import { ErrorEnvelopeDto } from './error-envelope';
import {
  AUTHENTICATED_RESPONSE_HEADERS,
  REQUEST_ID_RESPONSE_HEADER,
  RETRY_AFTER_RESPONSE_HEADER,
  SERVICE_UNAVAILABLE_RETRY_AFTER_HEADER,
} from './operational-headers';

/** Error statuses a route can document. */
export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 414 | 415 | 422 | 429 | 500 | 503;

interface StatusDefaults {
  description: string;
  codes: ErrorCode[];
  headers: HeadersObject;
}

/** The documentation of an error code's `details`: its schema, and the example shown with the code. */
interface ErrorDetailsDoc {
  schema: SchemaObject;
  example: Record<string, unknown>;
}

/** `details` per code, as declared by {@link documentErrorDetails}. */
const DETAILS_BY_CODE = new Map<ErrorCode, ErrorDetailsDoc>();
/** Codes already documented by a response, so a late {@link documentErrorDetails} cannot go unnoticed. */
const DOCUMENTED_CODES = new Set<ErrorCode>();

/**
 * Declares the shape of `details` for a code that always carries it, so every response documenting
 * `code` shows `details` in that shape: an object with `fields`, each always present (a response
 * listing several such codes documents one object with the fields of each, described per code), and
 * `example` in the response's example. The module that throws the code declares it, at
 * import time of the file that builds its `details` (CONTRACT.md, "Rate limits and back-pressure" and
 * "Quotas"), so `common/` names no feature (docs/ARCHITECTURE.md, "Modules (`src/`)").
 * Throws when `code` is declared twice, or after a route already documented it without `details`
 * (the declaring file must be imported, directly or through a service, before the controllers).
 */
export function documentErrorDetails(code: ErrorCode, fields: Record<string, SchemaObject>, example: Record<string, unknown>): void {
  if (DETAILS_BY_CODE.has(code)) throw new Error(`details of ${code} are already documented`);
  if (DOCUMENTED_CODES.has(code)) throw new Error(`details of ${code} are documented after a route documented ${code} without them`);
  DETAILS_BY_CODE.set(code, { schema: { type: 'object', required: Object.keys(fields), properties: fields }, example });
}

/**
 * One `details` schema for several codes with documented details ({@link documentErrorDetails}): every field of each (a field of
 * several codes described per code), required when every code requires it. (A `oneOf` keyed on `code`
 * would be more exact, but example validators and generated clients handle it unevenly.)
 */
function mergedDetails(codes: ErrorCode[]): SchemaObject {
  const properties: Record<string, SchemaObject> = {};
  const describedBy: Record<string, string[]> = {};
  for (const code of codes) {
    for (const [name, prop] of Object.entries(DETAILS_BY_CODE.get(code)!.schema.properties ?? {}) as [string, SchemaObject][]) {
      properties[name] ??= { ...prop };
      (describedBy[name] ??= []).push(`${code}: ${prop.description ?? name}`);
    }
  }
  for (const [name, descriptions] of Object.entries(describedBy)) properties[name].description = descriptions.join('; ');
  const required = codes
    .map((c) => DETAILS_BY_CODE.get(c)!.schema.required ?? [])
    .reduce((common, next) => common.filter((name) => next.includes(name)));
  return { type: 'object', description: 'Fields depend on `code`', required, properties };
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
  414: { description: 'Request URI too long', codes: ['URI_TOO_LONG'], headers: REQUEST_ID_RESPONSE_HEADER },
  415: { description: 'Body is not of a supported media type', codes: ['UNSUPPORTED_MEDIA_TYPE'], headers: REQUEST_ID_RESPONSE_HEADER },
  422: {
    description: 'Idempotency-Key reused with a different body',
    codes: ['IDEMPOTENCY_KEY_REUSED'],
    headers: AUTHENTICATED_RESPONSE_HEADERS,
  },
  429: {
    description: 'Monthly quota reached, too many jobs not yet ended, or too many requests per second; retry after `Retry-After` seconds',
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
 * get typed codes), its headers, an example, and `details` per code where {@link documentErrorDetails}
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
 * narrowed to the given codes (and, for codes with documented details ({@link documentErrorDetails}), `details` in that shape; for
 * several such codes, one object with the fields of each, described per code), and an example.
 * Used by {@link ApiErrorResponses}, and by the document builder for pipeline-wide errors.
 */
export function errorResponseOptions(spec: ErrorStatus | ErrorResponseSpec) {
  const { status, codes, description, headers } =
    typeof spec === 'number' ? { status: spec, ...ERROR_CODES_BY_STATUS[spec] } : { ...ERROR_CODES_BY_STATUS[spec.status], ...spec };
  for (const code of codes) DOCUMENTED_CODES.add(code);
  const withDetails = codes.filter((c) => DETAILS_BY_CODE.has(c));
  const codeSchema = { type: 'string' as const, enum: [...codes] };
  let narrowed: SchemaObject;
  if (withDetails.length === 0) {
    narrowed = { type: 'object', required: ['code'], properties: { code: codeSchema } };
  } else if (codes.length === 1) {
    narrowed = {
      type: 'object',
      required: ['code', 'details'],
      properties: { code: codeSchema, details: DETAILS_BY_CODE.get(codes[0])!.schema },
    };
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
    ...(DETAILS_BY_CODE.has(codes[0]) ? { details: DETAILS_BY_CODE.get(codes[0])!.example } : {}),
  };
  return {
    status,
    description: `${description}. Codes: ${codes.join(', ')}`,
    headers,
    schema: { allOf: [{ $ref: getSchemaPath(ErrorEnvelopeDto) }, narrowed] },
    example,
  };
}
