import { applyDecorators, Delete, Get, HttpCode } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiOperationOptions, ApiResponseOptions } from '@nestjs/swagger';
import { ApiErrorResponses, ErrorResponseSpec, ErrorStatus } from './api-error-responses.decorator';

/**
 * The routes every resource an account owns by id has in common (webhook endpoints, render keys, storage destinations,
 * monitors): their method, path, success status and error statuses in one place, documented in OpenAPI.
 * Statuses per CONTRACT.md "Status codes for success"; another account's resource is 404 like an unknown one
 * (CONTRACT.md, "Organizations and plan limits"). `id` is the route's `ApiParam` of `:id`.
 */

/** The error statuses of a request with a JSON body on an existing resource (`PATCH`, a rotation, a baseline). */
export const CHANGE_ERRORS: ErrorStatus[] = [400, 401, 404, 413, 415, 500];

/**
 * The error responses of creating a resource the plan counts: 400/413/415 for the body, 401, 500 and 403
 * `PLAN_LIMIT_REACHED` once the account has `limit` (e.g. "monitors … (free 3, starter 50, pro 500)").
 * `badRequest` replaces the plain 400 (e.g. with a feature's own 400 codes); `more` adds statuses (e.g. 404
 * for a referenced resource such as a profile).
 */
export function ApiPlanLimitedCreateErrors(
  limit: string,
  badRequest: ErrorStatus | ErrorResponseSpec = 400,
  ...more: (ErrorStatus | ErrorResponseSpec)[]
): MethodDecorator {
  return ApiErrorResponses(
    badRequest,
    401,
    { status: 403, codes: ['PLAN_LIMIT_REACHED'], description: `The account already has as many ${limit}` },
    ...more,
    413,
    415,
    500,
  );
}

/** `GET` of the collection: 200 with `ok` (a list body), or 401/500. */
export function ApiListRoute(operation: ApiOperationOptions, ok: ApiResponseOptions): MethodDecorator {
  return applyDecorators(Get(), ApiOperation(operation), ApiOkResponse(ok), ApiErrorResponses(401, 500));
}

/** `GET :id`: 200 with `ok`, or 401/404/500. */
export function ApiGetRoute(id: MethodDecorator, operation: ApiOperationOptions, ok: ApiResponseOptions): MethodDecorator {
  return applyDecorators(Get(':id'), id, ApiOperation(operation), ApiOkResponse(ok), ApiErrorResponses(401, 404, 500));
}

/** `DELETE :id`: 204 without a body, or 401/404/500. */
export function ApiDeleteRoute(id: MethodDecorator, operation: ApiOperationOptions): MethodDecorator {
  return applyDecorators(
    Delete(':id'),
    HttpCode(204),
    id,
    ApiOperation(operation),
    ApiNoContentResponse({ description: 'Deleted' }),
    ApiErrorResponses(401, 404, 500),
  );
}
