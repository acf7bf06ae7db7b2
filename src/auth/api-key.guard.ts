import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { ApiError, ErrorCode } from '../common/api-error';
import { ApiKeysService, AuthenticatedKey } from './api-keys.service';

const AUTHENTICATED_KEY = Symbol('authenticatedKey');
type AuthenticatedRequest = Request & { [AUTHENTICATED_KEY]?: AuthenticatedKey };

/** The key attached to a request by {@link ApiKeyGuard}, or undefined before authentication. */
export function authenticatedKeyOf(req: Request): AuthenticatedKey | undefined {
  return (req as AuthenticatedRequest)[AUTHENTICATED_KEY];
}

/** Parses `Authorization: Bearer <key>`; returns the key or null when the header is missing or malformed. */
export function bearerToken(header: string | undefined): string | null {
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header ?? '');
  return match ? match[1] : null;
}

/**
 * Guard of every `/v1` route: requires `Authorization: Bearer <key>` (spec section 5).
 * Throws 401 `UNAUTHENTICATED` (missing or malformed header), `INVALID_API_KEY` or `API_KEY_REVOKED`.
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
    req[AUTHENTICATED_KEY] = await this.apiKeys.authenticate(token);
    return true;
  }
}
