import { applyDecorators, createParamDecorator, ExecutionContext, UseGuards } from '@nestjs/common';
import { ApiBearerAuth } from '@nestjs/swagger';
import { ApiOrganizationIdHeader } from '../common/organization-id';
import type { Request } from 'express';
import { ApiKeyGuard, authenticatedKeyOf } from './api-key.guard';
import type { AuthenticatedKey } from './api-keys.service';

/** The {@link AuthenticatedKey} of the request; use on routes behind {@link ApiKeyAuth}. */
export const CurrentApiKey = createParamDecorator((_: unknown, ctx: ExecutionContext): AuthenticatedKey => {
  const key = authenticatedKeyOf(ctx.switchToHttp().getRequest<Request>());
  if (!key) throw new Error('CurrentApiKey used on a route without ApiKeyAuth');
  return key;
});

/**
 * Puts a controller or route behind the Bearer API key guard and documents the scheme in OpenAPI,
 * with the `X-Organization-ID` request header every `/v1` route accepts (checked by
 * `organizationIdMiddleware`; every `/v1` controller uses this decorator).
 */
export function ApiKeyAuth() {
  return applyDecorators(UseGuards(ApiKeyGuard), ApiBearerAuth('apiKey'), ApiOrganizationIdHeader());
}
