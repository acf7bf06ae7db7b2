import { CallHandler, ExecutionContext, Injectable, Logger, NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { catchError, concatMap, from, Observable, of, throwError } from 'rxjs';
import { authenticatedKeyOf } from '../auth/api-key.guard';
import { ApiError, ErrorCode } from '../common/api-error';
import { HEADER } from '../common/operational-headers';
import { HeldIdempotencyKey, IdempotencyScope, IdempotencyService } from './idempotency.service';
import { requestFingerprint } from './request-fingerprint';

/** `Idempotency-Key` values accepted (spec section 7.1); others are 400 `INVALID_IDEMPOTENCY_KEY`. */
export const IDEMPOTENCY_KEY_PATTERN = /^[A-Za-z0-9_-]{8,128}$/;

/** Options of `@Idempotent()`. */
export interface IdempotentOptions {
  /** Hash identifying the request's content; default {@link requestFingerprint} (JSON body, multipart fields and files). */
  fingerprint?: (req: Request) => string;
}

/** Metadata key of the route's {@link IdempotentOptions}. */
export const IDEMPOTENT_OPTIONS = Symbol('idempotentOptions');

/**
 * Idempotent retries for a route answering JSON (apply with `@Idempotent()`; CONTRACT.md,
 * "Idempotency"). Without an `Idempotency-Key` header the request runs as usual. With one, the key
 * is claimed in the caller's scope (API key, method, path) before validation and the handler run:
 * the first 2xx response is stored and sent, and retries with the same body get it back byte for
 * byte with `Idempotency-Replayed: true`, without running the handler; any other outcome releases
 * the key. The handler runs holding the key ({@link IdempotencyService.heldKey}): an acceptance
 * stores the response in its own transaction, and that stored text is what is sent. Needs the API
 * key guard to have run.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  private readonly logger = new Logger(IdempotencyInterceptor.name);

  constructor(
    private readonly store: IdempotencyService,
    private readonly reflector: Reflector,
  ) {}

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const req = context.switchToHttp().getRequest<Request>();
    const res = context.switchToHttp().getResponse<Response>();
    const key = req.headers['idempotency-key'];
    if (key === undefined) return next.handle();
    if (typeof key !== 'string' || !IDEMPOTENCY_KEY_PATTERN.test(key)) {
      throw new ApiError(ErrorCode.INVALID_IDEMPOTENCY_KEY, 400, 'Idempotency-Key must match [A-Za-z0-9_-]{8,128}');
    }
    const caller = authenticatedKeyOf(req);
    if (!caller) throw new Error('@Idempotent() used on a route without ApiKeyAuth');
    const options = this.reflector.get<IdempotentOptions | undefined>(IDEMPOTENT_OPTIONS, context.getHandler());
    const fingerprint = (options?.fingerprint ?? requestFingerprint)(req);
    const scope: IdempotencyScope = { apiKeyId: caller.apiKeyId, method: req.method, path: req.path.replace(/\/+$/, ''), key };

    const claim = await this.store.claim(scope, fingerprint);
    if (claim.kind === 'replay') {
      res.status(claim.status).setHeader(HEADER.idempotencyReplayed, 'true');
      return of(asJsonBody(res, claim.body));
    }
    const held: HeldIdempotencyKey = { scope, leaseToken: claim.leaseToken, successStatus: res.statusCode };
    return this.store
      .runHolding(held, () => next.handle())
      .pipe(
        concatMap(async (body) => {
          // Stored with the work it describes (an acceptance): send exactly that. The route must return
          // the acceptance's response unchanged (thin controller), or first answers and replays differ.
          if (held.storedBody !== undefined) {
            if (JSON.stringify(body) !== held.storedBody)
              this.logger.error(`${req.method} ${req.path}: the handler's answer differs from the response its acceptance stored`);
            return asJsonBody(res, held.storedBody);
          }
          if (res.statusCode < 200 || res.statusCode > 299) {
            await this.store.release(scope, claim.leaseToken);
            return body;
          }
          // Serialised once: what is stored is exactly what this response sends.
          const text = body === undefined ? '' : JSON.stringify(body);
          await this.store.complete(scope, claim.leaseToken, res.statusCode, text);
          return asJsonBody(res, text);
        }),
        catchError((err) => from(this.store.release(scope, claim.leaseToken)).pipe(concatMap(() => throwError(() => err)))),
      );
  }
}

/** The value for Nest to send so the body is exactly `text` (JSON), or nothing when empty. */
function asJsonBody(res: Response, text: string): string | undefined {
  if (!text) return undefined;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  return text;
}
