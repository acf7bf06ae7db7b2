import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { ApiError, ErrorCode } from '../common/api-error';
import { assertOrganizationOf } from '../common/organization-id';
import { ApiKeysService, AuthenticatedKey } from './api-keys.service';
import { bearerToken } from '../common/bearer-token';

const AUTHENTICATED_KEY = Symbol('authenticatedKey');
type AuthenticatedRequest = Request & { [AUTHENTICATED_KEY]?: AuthenticatedKey };

/** The key attached to a request by {@link ApiKeyGuard}, or undefined before authentication. */
export function authenticatedKeyOf(req: Request): AuthenticatedKey | undefined {
  return (req as AuthenticatedRequest)[AUTHENTICATED_KEY];
}

/**
 * Attaches `caller` to a request authenticated another way than a Bearer key (a render link's
 * signature names its render key's API key), so the operational headers describe that key.
 */
export function setAuthenticatedKey(req: Request, caller: AuthenticatedKey): void {
  (req as AuthenticatedRequest)[AUTHENTICATED_KEY] = caller;
}

/**
 * Guard of every `/v1` route: requires `Authorization: Bearer <key>` (spec section 5).
 * Throws 401 `UNAUTHENTICATED` (missing or malformed header), `INVALID_API_KEY` or `API_KEY_REVOKED`,
 * and 403 `ORGANIZATION_MISMATCH` when `X-Organization-ID` names another account (CONTRACT.md,
 * "Organizations and plan limits"), before the route runs.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(private readonly apiKeys: ApiKeysService) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const token = bearerToken(req.headers.authorization);
    if (!token) {
      throw new ApiError(ErrorCode.UNAUTHENTICATED, 401, 'Send the API key as "Authorization: Bearer <API_KEY>"');
    }
    const caller = await this.apiKeys.authenticate(token);
    assertOrganizationOf(req.headers['x-organization-id'], caller.accountId);
    req[AUTHENTICATED_KEY] = caller;
    return true;
  }
}
