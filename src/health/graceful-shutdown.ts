import { INestApplication, INestApplicationContext, Logger } from '@nestjs/common';
import type { Server } from 'node:http';
import { DrainState } from './drain-state';
import { InFlightRequests } from './in-flight-requests';
import { setTimeout as sleep } from 'node:timers/promises';

/** How long in-flight HTTP requests may take to finish after SIGTERM/SIGINT, ms. */
export const HTTP_DRAIN_TIMEOUT_MS = 10_000;

/**
 * The API's shutdown on SIGTERM/SIGINT: `/ready` turns 503 at once ({@link DrainState}); the listener
 * keeps accepting requests for `readyGraceMs` (`SHUTDOWN_DELAY_MS`: time for a load balancer or
 * Kubernetes to see the 503 and stop routing here); then it stops accepting connections and lets
 * in-flight requests finish, including those whose client has already gone away
 * ({@link InFlightRequests}), at most {@link HTTP_DRAIN_TIMEOUT_MS} in all, before the modules shut
 * down (queues, database). Nest's own shutdown hooks would close the queues and the database first,
 * so a request accepted a moment earlier would fail with a 500. Resolves when the app is closed.
 */
export async function drainHttpAndClose(app: INestApplication, readyGraceMs: number, signal: string): Promise<void> {
  const logger = new Logger('Shutdown');
  app.get(DrainState).begin();
  logger.log(`${signal}: not ready any more; draining HTTP requests, then stopping`);
  if (readyGraceMs > 0) await sleep(readyGraceMs);
  const deadline = Date.now() + HTTP_DRAIN_TIMEOUT_MS;
  const server = app.getHttpServer() as Server;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      server.closeAllConnections();
      resolve();
    }, HTTP_DRAIN_TIMEOUT_MS);
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    server.closeIdleConnections();
  });
  const inFlight = app.get(InFlightRequests);
  if (!(await inFlight.settled(Math.max(0, deadline - Date.now())))) {
    logger.warn(`${inFlight.size} HTTP requests still running after ${HTTP_DRAIN_TIMEOUT_MS} ms; stopping anyway`);
  }
  await app.close();
}

/**
 * The worker's shutdown: `/ready` of its health port turns 503, then the app closes (Bull waits for
 * the active captures and webhook attempts to finish), then `closeHealthServer` runs.
 */
export async function drainWorkerAndClose(
  app: INestApplicationContext,
  signal: string,
  closeHealthServer: () => Promise<void>,
): Promise<void> {
  app.get(DrainState).begin();
  new Logger('Shutdown').log(`${signal}: not ready any more; finishing active jobs, then stopping`);
  await app.close();
  await closeHealthServer();
}

/** Runs `close(signal)` once on the first SIGTERM or SIGINT, then exits 0 (1 if it threw). */
export function onTerminationSignals(close: (signal: string) => Promise<void>): void {
  let closing = false;
  const handler = (signal: string) => {
    if (closing) return;
    closing = true;
    close(signal).then(
      () => process.exit(0),
      (err) => {
        new Logger('Shutdown').error(`Shutdown failed: ${(err as Error).message}`, (err as Error).stack);
        process.exit(1);
      },
    );
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => handler(signal));
}
