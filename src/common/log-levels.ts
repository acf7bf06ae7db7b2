import { LogLevel } from '@nestjs/common';

const ORDER: LogLevel[] = ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'];

/** The Nest log levels enabled at `level` (`LOG_LEVEL`) and everything more severe. */
export function logLevelsFrom(level: LogLevel): LogLevel[] {
  return ORDER.slice(0, ORDER.indexOf(level) + 1);
}
