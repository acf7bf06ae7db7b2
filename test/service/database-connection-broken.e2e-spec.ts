import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';
import { isDependencyUnavailable } from '../../src/common/dependency-errors';
import { dataSourceOptions } from '../../src/database/data-source';

/**
 * A database connection that PostgreSQL ends while the service holds it between two queries of a
 * transaction, as a restart does (docs/durability.md): the process survives (an `error` event on a
 * checked-out `pg` client nobody listened to used to end it), the transaction fails with an error
 * that counts as "database unreachable" (so a worker's state write is retried, never dropped), and
 * the pool serves the next query on a new connection.
 */
describe('a database connection broken mid-transaction (service, real PostgreSQL)', () => {
  const databaseUrl = process.env.GLIMPSE_TEST_DATABASE_URL as string;
  let db: DataSource;

  beforeAll(async () => {
    Logger.overrideLogger(false);
    db = await new DataSource(dataSourceOptions({ databaseUrl })).initialize();
  });

  afterAll(async () => {
    await db?.destroy();
    Logger.overrideLogger(['error', 'warn']);
  });

  /** Runs `body`, collecting the uncaught exceptions it causes (an unheard `error` event is one). */
  async function uncaughtDuring(body: () => Promise<void>): Promise<unknown[]> {
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    process.on('uncaughtException', onUncaught);
    try {
      await body();
      await new Promise((r) => setTimeout(r, 200));
    } finally {
      process.off('uncaughtException', onUncaught);
    }
    return uncaught;
  }

  it('keeps the process when a connection checked out of the pool, between two queries, is ended', async () => {
    const [client, release] = await (db.driver as PostgresDriver).obtainMasterConnection();
    const uncaught = await uncaughtDuring(async () => {
      const { rows } = await client.query('SELECT pg_backend_pid() AS pid');
      await db.query('SELECT pg_terminate_backend($1)', [rows[0].pid]);
    });
    release(new Error('ended by the test'));
    expect(uncaught).toEqual([]);
    expect(await db.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
  });

  it('fails the transaction as unreachable, keeps the process and serves the next query', async () => {
    let failure: unknown = null;
    const uncaught = await uncaughtDuring(async () => {
      failure = await db
        .transaction(async (manager) => {
          const [{ pid }] = await manager.query('SELECT pg_backend_pid() AS pid');
          // Another session ends this one while it sits idle in its transaction: the server sends 57P01.
          await db.query('SELECT pg_terminate_backend($1)', [pid]);
          await new Promise((r) => setTimeout(r, 200));
          await manager.query('SELECT 1');
        })
        .then(
          () => null,
          (err: unknown) => err,
        );
    });
    expect(failure).toBeTruthy();
    expect(isDependencyUnavailable(failure)).toBe(true);
    expect(uncaught).toEqual([]);
    expect(await db.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
  });
});
