import { Global, Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import pino, { DestinationStream, Logger as PinoInstance } from 'pino';
import pretty from 'pino-pretty';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { redactSecrets } from './redact';

/** Injection token of the stream log lines are written to (stdout; a file in the tests). */
export const LOG_DESTINATION = Symbol('LOG_DESTINATION');
/** Injection token of the root pino logger (access lines are written with it). */
export const ROOT_LOGGER = Symbol('ROOT_LOGGER');

const PINO_LEVELS: Record<AppConfig['logLevel'], pino.Level> = {
  error: 'error',
  warn: 'warn',
  log: 'info',
  debug: 'debug',
  verbose: 'trace',
};

/**
 * The root logger: JSON lines (`LOG_FORMAT=json`) or coloured text (`pretty`), level from
 * `LOG_LEVEL`, and every line passed through {@link redactSecrets} just before it is written, so no
 * secret reaches the output whatever logged it (messages, stacks, bound fields).
 */
export function createRootLogger(config: Pick<AppConfig, 'logLevel' | 'logFormat'>, destination: DestinationStream): PinoInstance {
  const stream = config.logFormat === 'pretty' ? pretty({ colorize: true, destination: destination as never, sync: true }) : destination;
  return pino(
    {
      level: PINO_LEVELS[config.logLevel],
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      hooks: { streamWrite: redactSecrets },
    },
    stream,
  );
}

/** The destination and the root logger, shared by nestjs-pino and `HttpObservability`. */
@Module({
  providers: [
    { provide: LOG_DESTINATION, useFactory: (): DestinationStream => pino.destination({ dest: 1, sync: false }) },
    {
      provide: ROOT_LOGGER,
      inject: [APP_CONFIG, LOG_DESTINATION],
      useFactory: (config: AppConfig, destination: DestinationStream) => createRootLogger(config, destination),
    },
  ],
  exports: [ROOT_LOGGER],
})
class RootLoggerModule {}

/**
 * Logging for the whole app with nestjs-pino: Nest's `Logger` calls go to the root logger, and
 * within a request every line carries its `requestId` (the same id as the `X-Request-ID` header),
 * through `requestLogContextMiddleware` (mounted by `configureApp`; nestjs-pino mounts no
 * middleware of its own, pino-http's per-request loggers are not needed).
 * The access line of each request is written by `HttpObservability`.
 */
@Global()
@Module({
  imports: [
    RootLoggerModule,
    LoggerModule.forRootAsync({
      imports: [RootLoggerModule],
      inject: [ROOT_LOGGER],
      useFactory: (logger: PinoInstance) => ({
        // The logger used outside a request; `useExisting` with no routes: no pino-http middleware.
        pinoHttp: { logger },
        useExisting: true,
        forRoutes: [],
      }),
    }),
  ],
  exports: [RootLoggerModule],
})
export class LoggingModule {}
