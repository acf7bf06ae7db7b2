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

/**
 * After authentication (REST guard and MCP endpoint): an account is an organization, so an
 * `X-Organization-ID` of the account-id form (`acc_…`) must be the API key's own account id
 * (CONTRACT.md, "Organizations and plan limits"). Throws 400 `INVALID_ORGANIZATION_ID` for a value
 * of the wrong shape and 403 `ORGANIZATION_MISMATCH` for another account's id, before anything is
 * done; an absent header, or a well-formed value of another form, changes nothing.
 */
export function assertOrganizationOf(header: string | string[] | undefined, accountId: string): void {
  if (header === undefined) return;
  const value = String(header);
  if (!ORGANIZATION_ID_PATTERN.test(value)) {
    throw new ApiError(ErrorCode.INVALID_ORGANIZATION_ID, 400, 'X-Organization-ID must match [A-Za-z0-9_-]{6,64}');
  }
  if (value.startsWith('acc_') && value !== accountId) {
    throw new ApiError(ErrorCode.ORGANIZATION_MISMATCH, 403, "X-Organization-ID names another organization than this API key's account");
  }
}

/** Documents the optional `X-Organization-ID` request header with its pattern. */
export function ApiOrganizationIdHeader() {
  return ApiHeader({
    name: 'X-Organization-ID',
    required: false,
    description:
      "Optional organization id: an account is an organization, so an account id (`acc_…`) other than the API key's account is 403 `ORGANIZATION_MISMATCH` and nothing is done; pattern-checked (400 `INVALID_ORGANIZATION_ID`); other well-formed values are ignored",
    schema: { type: 'string', pattern: ORGANIZATION_ID_PATTERN.source },
  });
}
