import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module';
import { logLevelsFrom } from './common/log-levels';
import { ConfigError, loadConfigFromProcessEnv } from './config/app-config';

/** Queue processors only, no HTTP listener; run several against the same PostgreSQL and Redis to scale out. */
async function bootstrap(): Promise<void> {
  const config = loadConfigFromProcessEnv();
  const app = await NestFactory.createApplicationContext(AppModule.register({ config, runProcessors: true }), {
    logger: logLevelsFrom(config.logLevel),
  });
  app.enableShutdownHooks();
  new Logger('Glimpse').log('Worker started');
}

bootstrap().catch((err) => {
  process.stderr.write(err instanceof ConfigError ? `${err.message}\n` : `${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
