import type { NextFunction, Request, Response } from 'express';
// nestjs-pino's own AsyncLocalStorage: its `Logger`/`PinoLogger` read the request's logger from it.
import { storage } from 'nestjs-pino/storage';
import type { Logger as PinoInstance } from 'pino';
import { requestIdMiddleware, requestIdOf } from '../common/request-context';

/**
 * What nestjs-pino's `Logger` finds in its async-local store during a request: a child of the root
 * logger bound to `{ requestId }`, created on first use only. Most requests log nothing but their
 * access line (written by `HttpObservability` with the root logger), so creating it eagerly, as
 * pino-http does (three child loggers and a serialized `req` per request), is wasted work.
 * `PinoLogger.assign` replaces it through the setter, as with nestjs-pino's own store.
 */
class LazyRequestLogStore {
  private child: PinoInstance | undefined;
  /** nestjs-pino's response logger (its `assignResponse` option, unused here). */
  readonly responseLogger = undefined;

  constructor(
    private readonly root: PinoInstance,
    private readonly req: Request,
  ) {}

  get logger(): PinoInstance {
    return (this.child ??= this.root.child({ requestId: requestIdOf(this.req) }));
  }

  set logger(logger: PinoInstance) {
    this.child = logger;
  }
}

/**
 * Express middleware: assigns the request id and its `X-Request-ID` header ({@link requestIdMiddleware},
 * one layer instead of two), then runs the rest of the request inside nestjs-pino's store with a
 * {@link LazyRequestLogStore}, so every line logged through Nest's `Logger` while handling the
 * request carries its `requestId`. Replaces pino-http's per-request middleware (`LoggingModule`
 * mounts none).
 */
export function requestContextMiddleware(root: PinoInstance) {
  return (req: Request, res: Response, next: NextFunction): void => {
    requestIdMiddleware(req, res, () => storage.run(new LazyRequestLogStore(root, req) as never, next));
  };
}
