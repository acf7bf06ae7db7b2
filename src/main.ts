import 'reflect-metadata';
import { INestApplication, Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Server } from 'node:http';
import { AppModule } from './app.module';
import { ConfigError, loadConfigFromProcessEnv } from './config/app-config';
import { configureApp } from './configure-app';
import { logLevelsFrom } from './common/log-levels';

/** How long in-flight HTTP requests may take to finish after SIGTERM/SIGINT, ms. */
const HTTP_DRAIN_TIMEOUT_MS = 10_000;

/** The HTTP API; with `WORKER_MODE=inline` (default) it also runs the queue processors. */
async function bootstrap(): Promise<void> {
  const config = loadConfigFromProcessEnv();
  const app = await NestFactory.create(AppModule.register({ config, runProcessors: config.workerMode === 'inline' }), {
    bodyParser: false,
    logger: logLevelsFrom(config.logLevel),
  });
  configureApp(app);
  await app.listen(config.port);
  closeGracefullyOnSignals(app);
  new Logger('Glimpse').log(`API listening on ${config.publicBaseUrl} (workers: ${config.workerMode}); docs at /docs`);
}

/**
 * On SIGTERM or SIGINT: stop accepting connections and let in-flight requests finish (at most
 * {@link HTTP_DRAIN_TIMEOUT_MS}) before the modules shut down. Nest's own shutdown hooks would close the
 * queues and the database first, so a request accepted a moment earlier would fail with a 500.
 */
function closeGracefullyOnSignals(app: INestApplication): void {
  const logger = new Logger('Glimpse');
  let closing = false;
  const close = async (signal: string) => {
    if (closing) return;
    closing = true;
    logger.log(`${signal}: draining HTTP requests, then stopping`);
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
    await app.close();
    process.exit(0);
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void close(signal));
}

bootstrap().catch((err) => {
  // Invalid configuration: one line per problem, no stack.
  process.stderr.write(err instanceof ConfigError ? `${err.message}\n` : `${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
