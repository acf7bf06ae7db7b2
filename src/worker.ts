import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { AddressInfo } from 'node:net';
import { Logger as PinoNestLogger } from 'nestjs-pino';
import { AppModule } from './app.module';
import { ConfigError, loadConfigFromProcessEnv } from './config/app-config';
import { drainWorkerAndClose, onTerminationSignals } from './health/graceful-shutdown';
import { startOpsHttpServer } from './health/ops-http-server';

/**
 * Queue processors only; run several against the same PostgreSQL and Redis to scale out. Serves
 * `/health`, `/ready` and `/metrics` on `WORKER_HEALTH_PORT` (default 3001), no API routes.
 */
async function bootstrap(): Promise<void> {
  const config = loadConfigFromProcessEnv();
  const app = await NestFactory.createApplicationContext(AppModule.register({ config, runProcessors: true }), {
    bufferLogs: true,
  });
  app.useLogger(app.get(PinoNestLogger));
  const server = await startOpsHttpServer(app, config.workerHealthPort);
  onTerminationSignals((signal) => drainWorkerAndClose(app, signal, () => new Promise<void>((resolve) => server.close(() => resolve()))));
  const { port } = server.address() as AddressInfo;
  new Logger('Glimpse').log(`Worker started; /health, /ready and /metrics on port ${port}`);
}

bootstrap().catch((err) => {
  process.stderr.write(err instanceof ConfigError ? `${err.message}\n` : `${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
