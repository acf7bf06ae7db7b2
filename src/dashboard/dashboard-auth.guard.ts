import { CanActivate, ExecutionContext, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { DashboardRequest, SignInRequired } from './dashboard-request';

const PUBLIC_PAGE = 'dashboard:public';

/** Marks a dashboard route reachable without a session (sign-in, sign-up, set password, assets). */
export const PublicPage = () => SetMetadata(PUBLIC_PAGE, true);

/**
 * Every dashboard route needs a session unless marked {@link PublicPage}; without one it throws
 * {@link SignInRequired}, which the dashboard filter answers with a 303 to `/dashboard/login`
 * (CONTRACT.md, "Dashboard").
 */
@Injectable()
export class DashboardAuthGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    const isPublic = this.reflector.getAllAndOverride<boolean>(PUBLIC_PAGE, [context.getHandler(), context.getClass()]);
    if (isPublic) return true;
    const req = context.switchToHttp().getRequest<DashboardRequest>();
    if (!req.dashboard?.signedIn) throw new SignInRequired();
    return true;
  }
}
