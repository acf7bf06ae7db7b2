import { ApiHeader } from '@nestjs/swagger';
import type { NextFunction, Request, Response } from 'express';
import { ApiError, ErrorCode } from './api-error';
import { sendError } from './error-envelope';
import { requestIdOf } from './request-context';

/** `X-Organization-ID` values accepted (spec section 7.1); others are 400 `INVALID_ORGANIZATION_ID`. */
export const ORGANIZATION_ID_PATTERN = /^[A-Za-z0-9_-]{6,64}$/;

/**
 * Express middleware for every `/v1` request: an `X-Organization-ID` that is present must match
 * {@link ORGANIZATION_ID_PATTERN}; a valid one is otherwise ignored until organizations exist.
 * Runs before authentication, like body parsing, so its 400 carries no rate-limit headers.
 */
export function organizationIdMiddleware(req: Request, res: Response, next: NextFunction): void {
  const value = req.headers['x-organization-id'];
  if (value === undefined || !req.path.startsWith('/v1/') || ORGANIZATION_ID_PATTERN.test(String(value))) return next();
  sendError(
    res,
    requestIdOf(req),
    new ApiError(ErrorCode.INVALID_ORGANIZATION_ID, 400, 'X-Organization-ID must match [A-Za-z0-9_-]{6,64}'),
  );
}

/** Documents the optional `X-Organization-ID` request header with its pattern. */
export function ApiOrganizationIdHeader() {
  return ApiHeader({
    name: 'X-Organization-ID',
    required: false,
    description: 'Optional organization id; pattern-checked (400 `INVALID_ORGANIZATION_ID`), otherwise ignored for now',
    schema: { type: 'string', pattern: ORGANIZATION_ID_PATTERN.source },
  });
}
