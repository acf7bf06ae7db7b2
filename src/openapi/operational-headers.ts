import type {
  OpenAPIObject,
  OperationObject,
  ParameterObject,
  ReferenceObject,
  SchemaObject,
} from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { errorResponseOptions } from '../common/api-error-responses.decorator';
import type { ErrorCode } from '../common/api-error';
import {
  HEADER,
  IDEMPOTENCY_REPLAYED_RESPONSE_HEADER,
  RATE_LIMIT_RESPONSE_HEADERS,
  REQUEST_ID_RESPONSE_HEADER,
  RETRY_AFTER_RESPONSE_HEADER,
} from '../common/operational-headers';
import { REQUEST_ID_PATTERN } from '../common/request-id';

const isReference = (value: unknown): value is ReferenceObject => typeof value === 'object' && value !== null && '$ref' in value;

/**
 * Statuses never answered with a known API key. (413 and 415 are answered before authentication by
 * the JSON body parser, but after it by an upload route's file checks, so they may carry the headers.)
 */
const BEFORE_AUTHENTICATION = new Set(['401']);

/**
 * Completes every operation of `doc` (mutating it) where a route's decorators left something out, by
 * rules that hold for the whole `/v1` pipeline rather than per route, so new routes are documented
 * alike:
 * - the optional `X-Request-ID` request header, and `X-Request-ID` on every response (set by the
 *   request-id middleware on every answer);
 * - `X-RateLimit-*` (optional) on every response of an authenticated operation but 401, as the global
 *   rate-limit interceptor sets them whenever the key is known;
 * - 400 `INVALID_ORGANIZATION_ID` on every operation taking `X-Organization-ID` (a global middleware
 *   checks it), added to the operation's 400 codes or as a 400 of its own;
 * - 403 `ORGANIZATION_MISMATCH` on every authenticated operation (the API key guard compares an
 *   account id in `X-Organization-ID` with the key's account), added to the operation's 403 codes or
 *   as a 403 of its own;
 * - 429 `RATE_LIMITED` on every authenticated operation (the global per-second rate limit,
 *   `RATE_LIMIT_PER_SECOND`), added to the operation's 429 codes or as a 429 of its own;
 * - `Retry-After` on every 429;
 * - 503 `SERVICE_UNAVAILABLE` (with `Retry-After`) on every authenticated operation: the API key is
 *   checked in PostgreSQL, so any of them answers it while PostgreSQL is unreachable (CONTRACT.md,
 *   "Rate limits and back-pressure");
 * - on an operation that takes `Idempotency-Key` (`@Idempotent()`): 400 `INVALID_IDEMPOTENCY_KEY`, 409
 *   `IDEMPOTENCY_IN_FLIGHT` and 422 `IDEMPOTENCY_KEY_REUSED`, each added to the route's own codes of
 *   that status (a route's 409 `RUN_ALREADY_ENDED` keeps its code), and `Idempotency-Replayed` on its
 *   2xx responses.
 * What a route declares itself (see `src/common/operational-headers.ts`) is kept as it is.
 * `ErrorEnvelopeDto` must be among the document's schemas.
 */
export function addOperationalHeaders(doc: OpenAPIObject): void {
  for (const operation of operationsOf(doc)) {
    const parameters = (operation.parameters ??= []);
    const names = parameters.filter((p): p is ParameterObject => !isReference(p)).map((p) => p.name.toLowerCase());
    if (names.includes('x-organization-id')) addErrorCode(operation, 400, 'INVALID_ORGANIZATION_ID');
    const idempotent = names.includes('idempotency-key');
    if (idempotent) {
      addErrorCode(operation, 400, 'INVALID_IDEMPOTENCY_KEY');
      addErrorCode(operation, 409, 'IDEMPOTENCY_IN_FLIGHT');
      addErrorCode(operation, 422, 'IDEMPOTENCY_KEY_REUSED');
    }
    const authenticated = (operation.security ?? doc.security ?? []).some((requirement) => Object.keys(requirement).length > 0);
    if (authenticated) addErrorCode(operation, 403, 'ORGANIZATION_MISMATCH');
    if (authenticated) addRateLimitedCode(operation);
    if (!names.includes('x-request-id')) {
      parameters.push({
        name: HEADER.requestId,
        in: 'header',
        required: false,
        description: 'Your own id for this request; echoed in the `X-Request-ID` response header when it matches the pattern.',
        schema: { type: 'string', pattern: REQUEST_ID_PATTERN.source, example: 'client-7f3a9c21' },
      });
    }
    if (authenticated && !operation.responses?.['503']) {
      const { description, headers, schema, example } = errorResponseOptions(503);
      (operation.responses ??= {})['503'] = { description, headers, content: { 'application/json': { schema, example } } };
    }
    for (const [status, response] of Object.entries(operation.responses ?? {})) {
      if (!response || isReference(response)) continue;
      const headers = { ...response.headers };
      const has = (name: string) => Object.keys(headers).some((h) => h.toLowerCase() === name.toLowerCase());
      if (!has(HEADER.requestId)) Object.assign(headers, REQUEST_ID_RESPONSE_HEADER);
      if (authenticated && !BEFORE_AUTHENTICATION.has(status)) {
        for (const [name, header] of Object.entries(RATE_LIMIT_RESPONSE_HEADERS)) if (!has(name)) headers[name] = header;
      }
      if (status === '429' && !has(HEADER.retryAfter)) Object.assign(headers, RETRY_AFTER_RESPONSE_HEADER);
      if (idempotent && status.startsWith('2') && !has(HEADER.idempotencyReplayed))
        Object.assign(headers, IDEMPOTENCY_REPLAYED_RESPONSE_HEADER);
      response.headers = headers;
    }
  }
}

/**
 * Makes `code` one of the documented codes of `status` on `operation`: appended to the `code` enum of
 * its error schema (as written by `ApiErrorResponses`), or as a new error response with that code.
 */
function addErrorCode(operation: OperationObject, status: 400 | 403 | 409 | 422, code: ErrorCode): void {
  const responses = (operation.responses ??= {});
  const existing = responses[String(status)];
  if (!existing) {
    const { description, headers, schema, example } = errorResponseOptions({ status, codes: [code] });
    responses[String(status)] = { description, headers, content: { 'application/json': { schema, example } } };
    return;
  }
  if (isReference(existing)) return;
  const schema = existing.content?.['application/json']?.schema as SchemaObject | undefined;
  const codeSchema = (schema?.allOf?.[1] as SchemaObject | undefined)?.properties?.code as SchemaObject | undefined;
  if (codeSchema?.enum && !codeSchema.enum.includes(code)) {
    codeSchema.enum = [...codeSchema.enum, code];
    existing.description = `${existing.description}, ${code}`;
  }
}

/** Makes `RATE_LIMITED` one of the 429 codes of `operation` (rebuilding its 429 with the per-code `details`). */
function addRateLimitedCode(operation: OperationObject): void {
  const responses = (operation.responses ??= {});
  const existing = responses['429'];
  if (existing && isReference(existing)) return;
  const schema = existing?.content?.['application/json']?.schema as SchemaObject | undefined;
  const codes = (((schema?.allOf?.[1] as SchemaObject | undefined)?.properties?.code as SchemaObject | undefined)?.enum ??
    []) as ErrorCode[];
  if (codes.includes('RATE_LIMITED')) return;
  const {
    description,
    headers,
    schema: rebuilt,
    example,
  } = errorResponseOptions({
    status: 429,
    codes: [...codes, 'RATE_LIMITED'],
    ...(codes.length ? {} : { description: 'Too many requests per second for this API key; retry after `Retry-After` seconds' }),
  });
  responses['429'] = { description, headers, content: { 'application/json': { schema: rebuilt, example } } };
}

/** Every operation object under `paths`. */
export function operationsOf(doc: Pick<OpenAPIObject, 'paths'>): OperationObject[] {
  const methods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
  return Object.values(doc.paths ?? {}).flatMap((item) => methods.map((m) => item[m]).filter((op): op is OperationObject => !!op));
}
