import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module';
import { ConfigError, loadConfigFromProcessEnv } from './config/app-config';
import { configureApp } from './configure-app';
import { logLevelsFrom } from './common/log-levels';

/** The HTTP API; with `WORKER_MODE=inline` (default) it also runs the queue processors. */
async function bootstrap(): Promise<void> {
  const config = loadConfigFromProcessEnv();
  const app = await NestFactory.create(AppModule.register({ config, runProcessors: config.workerMode === 'inline' }), {
    bodyParser: false,
    logger: logLevelsFrom(config.logLevel),
  });
  configureApp(app);
  await app.listen(config.port);
  new Logger('Glimpse').log(`API listening on ${config.publicBaseUrl} (workers: ${config.workerMode}); docs at /docs`);
}

bootstrap().catch((err) => {
  // Invalid configuration: one line per problem, no stack.
  process.stderr.write(err instanceof ConfigError ? `${err.message}\n` : `${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
