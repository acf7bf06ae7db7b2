import { Logger } from '@nestjs/common';
import { Client, ClientConfig } from 'pg';

const logger = new Logger('PostgreSQL');

/**
 * The `pg` client class of the service's connection pool (TypeORM's `extra.Client`). It always listens
 * for `error`: a connection that PostgreSQL ends while the client is checked out and between two
 * queries (a restart ends sessions with 57P01 "terminating connection due to administrator command")
 * emits `error` after TypeORM's query runner already let go of it, and an `error` event nobody listens
 * to ends the Node process (docs/durability.md). The broken connection is dropped by the pool as
 * before; the next query fails with a connection error, which the callers retry or answer with 503.
 */
export class GuardedPgClient extends Client {
  constructor(config?: string | ClientConfig) {
    super(config);
    this.on('error', (err: Error) => logger.warn(`A database connection broke: ${err.message}`));
  }
}
