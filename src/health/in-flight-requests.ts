import { Injectable } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';

/**
 * The HTTP requests this process is still handling, so the SIGTERM drain (`drainHttpAndClose`)
 * closes the database and queues only once every handler has finished.
 *
 * A request counts from its arrival until the app ends its response (`res.end`), or, for a response
 * already streaming (headers sent), until its connection closes. Closed sockets alone are not enough:
 * a client that goes away mid-request (a timeout, a load balancer's abort) closes its socket while
 * the handler still runs, and Node's `server.close()` then reports the server closed although that
 * handler will still query PostgreSQL.
 */
@Injectable()
export class InFlightRequests {
  private count = 0;
  private waiters: (() => void)[] = [];

  /** Counts each request; `configureApp` runs it first, in front of Express. */
  readonly middleware = (_req: Request, res: Response, next: NextFunction): void => {
    this.count += 1;
    let counted = true;
    const done = () => {
      if (!counted) return;
      counted = false;
      this.count -= 1;
      if (this.count === 0) for (const wake of this.waiters.splice(0)) wake();
    };
    const end = res.end;
    res.end = function (this: Response, ...args: unknown[]) {
      done();
      return (end as (...a: unknown[]) => Response).apply(this, args);
    } as Response['end'];
    res.once('close', () => {
      if (res.headersSent) done();
    });
    next();
  };

  /** Requests not yet answered. */
  get size(): number {
    return this.count;
  }

  /** Resolves true once no request is in flight, or false after `timeoutMs` (ms) with some still running. */
  settled(timeoutMs: number): Promise<boolean> {
    if (this.count === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== wake);
        resolve(false);
      }, timeoutMs);
      this.waiters.push(wake);
    });
  }
}
