import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { Request } from 'express';
import { from, Observable, switchMap } from 'rxjs';
import { authenticatedKeyOf } from '../auth/api-key.guard';
import { RequestRateLimiter } from './request-rate-limiter';

/**
 * Global interceptor: counts every authenticated `/v1` request against the key's per-second rate
 * ({@link RequestRateLimiter}) before anything else of the route runs, so a limited request (429
 * `RATE_LIMITED`) creates nothing, counts no quota and holds no idempotency key. Registered after
 * the `X-RateLimit-*` headers interceptor, so its 429 carries those headers like every authenticated answer.
 */
@Injectable()
export class RequestRateLimitInterceptor implements NestInterceptor {
  constructor(private readonly limiter: RequestRateLimiter) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (!this.limiter.enabled || context.getType() !== 'http') return next.handle();
    const caller = authenticatedKeyOf(context.switchToHttp().getRequest<Request>());
    if (!caller) return next.handle();
    return from(this.limiter.consume(caller)).pipe(switchMap(() => next.handle()));
  }
}
