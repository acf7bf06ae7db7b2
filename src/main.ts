import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module';
import { ConfigError, loadConfigFromProcessEnv } from './config/app-config';
import { configureApp } from './configure-app';
import { runMigrationsUnderLock } from './database/migrate';
import { drainHttpAndClose, onTerminationSignals } from './health/graceful-shutdown';
import { startOpsHttpServer } from './health/ops-http-server';

/**
 * The HTTP API; with `WORKER_MODE=inline` (default) it also runs the queue processors. With
 * `MIGRATE_ON_START` (default) it first applies pending migrations under the advisory lock, so
 * replicas starting together apply them once.
 */
async function bootstrap(): Promise<void> {
  const config = loadConfigFromProcessEnv();
  const app = await NestFactory.create(AppModule.register({ config, runProcessors: config.workerMode === 'inline' }), {
    bodyParser: false,
    bufferLogs: true,
  });
  configureApp(app);
  const logger = new Logger('Glimpse');
  if (config.migrateOnStart) {
    const applied = await runMigrationsUnderLock(config);
    logger.log(applied.length ? `Applied migrations ${applied.join(', ')}` : 'Database schema is up to date');
  }
  await app.listen(config.port);
  // A separate port for scrapers inside the network (CONTRACT.md, "Health and readiness").
  if (config.metricsPort) await startOpsHttpServer(app, config.metricsPort);
  onTerminationSignals((signal) => drainHttpAndClose(app, config.shutdownDelayMs, signal));
  logger.log(`API listening on ${config.publicBaseUrl} (workers: ${config.workerMode}); docs at /docs`);
}

bootstrap().catch((err) => {
  // Invalid configuration: one line per problem, no stack.
  process.stderr.write(err instanceof ConfigError ? `${err.message}\n` : `${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
