import type { NextFunction, Request, Response } from 'express';
import { resolveRequestId } from './request-id';

const REQUEST_ID = Symbol('requestId');
type WithRequestId = Request & { [REQUEST_ID]?: string };

/** The request id assigned by {@link requestIdMiddleware} (or a fresh one for a request that bypassed it). */
export function requestIdOf(req: Request): string {
  const r = req as WithRequestId;
  r[REQUEST_ID] ??= resolveRequestId(req.headers['x-request-id']);
  return r[REQUEST_ID];
}

/** Express middleware: assigns the request id and sets `X-Request-ID` on every response (spec section 7.1). */
export function requestIdMiddleware(req: Request, res: Response, next: NextFunction): void {
  res.setHeader('X-Request-ID', requestIdOf(req));
  next();
}
