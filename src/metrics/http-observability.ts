import { Inject, Injectable } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import type { Logger as PinoInstance } from 'pino';
import { authenticatedKeyOf } from '../auth/api-key.guard';
import { requestIdOf } from '../common/request-context';
import { ROOT_LOGGER } from '../logging/logging.module';
import { Metrics } from './metrics';

/** Route label of a request no route matched (keeps the label set bounded). */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * Per request, when the response is finished (or the client went away): one access log line
 * `{ requestId, method, route, status, durationMs, apiKeyId }` at level info, and the HTTP metrics.
 * `route` is the route template (`/v1/screenshot/:id`, `/mcp/:key`), never the concrete path, so no
 * id or key from a URL reaches a log line or a label.
 */
@Injectable()
export class HttpObservability {
  constructor(
    private readonly metrics: Metrics,
    @Inject(ROOT_LOGGER) private readonly logger: PinoInstance,
  ) {}

  /** Express middleware; mount it first. */
  readonly middleware = (req: Request, res: Response, next: NextFunction): void => {
    const startedAt = process.hrtime.bigint();
    let recorded = false;
    const record = () => {
      if (recorded) return;
      recorded = true;
      const seconds = Number(process.hrtime.bigint() - startedAt) / 1e9;
      const route = routeOf(req);
      // 499 (nginx's convention) when the client closed the connection before the answer was sent.
      const status = res.writableFinished ? res.statusCode : 499;
      this.metrics.httpRequests.inc({ method: req.method, route, status: String(status) });
      this.metrics.httpRequestDuration.observe({ method: req.method, route }, seconds);
      this.logger.info(
        {
          requestId: requestIdOf(req),
          method: req.method,
          route,
          status,
          durationMs: Math.round(seconds * 1e4) / 10,
          apiKeyId: authenticatedKeyOf(req)?.apiKeyId ?? null,
        },
        'request',
      );
    };
    res.once('finish', record);
    res.once('close', record);
    next();
  };
}

/** The route template Express matched (`baseUrl` + `route.path`), or {@link UNMATCHED_ROUTE}. */
function routeOf(req: Request): string {
  const path = (req.route as { path?: unknown } | undefined)?.path;
  if (typeof path !== 'string') return UNMATCHED_ROUTE;
  return `${req.baseUrl}${path}` || '/';
}
