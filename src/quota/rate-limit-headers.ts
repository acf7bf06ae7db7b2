import { CallHandler, ExecutionContext, Injectable, Logger, NestInterceptor } from '@nestjs/common';
import type { Request, Response } from 'express';
import { catchError, concatMap, defer, from, Observable, switchMap, throwError } from 'rxjs';
import { authenticatedKeyOf } from '../auth/api-key.guard';
import { HEADER, LEGACY_FREE_POLICY } from '../common/operational-headers';
import { QuotaService, QuotaStatus } from './quota.service';
import { RequestRateLimiter } from './request-rate-limiter';
import { unixSeconds } from '../common/utc-month';

/** The `X-RateLimit-*` headers of a quota status (spec section 7.1). */
export function rateLimitHeaders(status: QuotaStatus): Record<string, string> {
  const headers: Record<string, string> = {
    [HEADER.rateLimitLimit]: String(status.limit),
    [HEADER.rateLimitRemaining]: String(status.remaining),
    [HEADER.rateLimitReset]: String(unixSeconds(status.resetAt)),
  };
  if (status.plan === 'legacy_free') headers[HEADER.rateLimitPolicy] = LEGACY_FREE_POLICY;
  return headers;
}

/**
 * The one global interceptor of authenticated requests (one, not two: Nest wraps every global
 * interceptor of every request, `/health` included, in an rxjs layer and an `AsyncResource`):
 * - first counts the request against the key's per-second rate ({@link RequestRateLimiter}), before
 *   anything else of the route runs, so a limited request (429 `RATE_LIMITED`) creates nothing,
 *   counts no quota and holds no idempotency key;
 * - once the request has been handled, successfully or not, sets the `X-RateLimit-*` headers from
 *   the key's usage at that moment, so the answer to an accepted job already counts it: for a
 *   request that reserved a screenshot, the reservation's own result (no second query,
 *   {@link QuotaService.statusFor}). The rate limit, pipes, the handler and route interceptors
 *   (idempotency) run inside it, so their errors (400, 404, 409, 422, 429, 500) carry the headers
 *   too; the guard's 401s, thrown before any key is known, do not.
 * A request without an authenticated key passes through untouched.
 */
@Injectable()
export class RateLimitHeadersInterceptor implements NestInterceptor {
  private readonly logger = new Logger(RateLimitHeadersInterceptor.name);

  constructor(
    private readonly quota: QuotaService,
    private readonly limiter: RequestRateLimiter,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const http = context.switchToHttp();
    const caller = authenticatedKeyOf(http.getRequest<Request>());
    if (!caller) return next.handle();
    const res = http.getResponse<Response>();
    const setHeaders = async () => {
      try {
        for (const [name, value] of Object.entries(rateLimitHeaders(await this.quota.statusFor(caller)))) res.setHeader(name, value);
      } catch (err) {
        // The request itself went through; only its hints are missing.
        this.logger.error(`Could not read the quota of ${caller.apiKeyId}`, (err as Error).stack);
      }
    };
    const handled = this.limiter.enabled ? defer(() => this.limiter.consume(caller)).pipe(switchMap(() => next.handle())) : next.handle();
    return handled.pipe(
      concatMap(async (body) => {
        await setHeaders();
        return body;
      }),
      catchError((err) => from(setHeaders()).pipe(concatMap(() => throwError(() => err)))),
    );
  }
}
