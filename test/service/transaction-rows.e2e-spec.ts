import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/database/data-source';
import { preparedStatementName, transactionRows } from '../../src/sql/sql';

/**
 * `transactionRows` (src/sql/sql.ts, docs/performance.md#captures) on real PostgreSQL: the statement
 * runs in the transaction of the manager it is given, as a named prepared statement, and is refused
 * outside a transaction.
 */
describe('transactionRows (service, real PostgreSQL)', () => {
  const databaseUrl = process.env.GLIMPSE_TEST_DATABASE_URL as string;
  const table = `transaction_rows_${process.pid}`;
  let db: DataSource;

  beforeAll(async () => {
    Logger.overrideLogger(false);
    db = await new DataSource(dataSourceOptions({ databaseUrl })).initialize();
    await db.query(`CREATE TABLE ${table} (id int PRIMARY KEY)`);
  });

  afterAll(async () => {
    await db?.query(`DROP TABLE IF EXISTS ${table}`);
    await db?.destroy();
    Logger.overrideLogger(['error', 'warn']);
  });

  it("runs in the manager's transaction: its writes commit or roll back with the transaction's own", async () => {
    const insert = `INSERT INTO ${table} (id) VALUES ($1) RETURNING id, txid_current()::text AS txid`;
    const committed = await db.transaction(async (manager) => {
      const [own] = (await manager.query('SELECT txid_current()::text AS txid')) as { txid: string }[];
      const [row] = await transactionRows<{ id: number; txid: string }>(manager, insert, [1]);
      return { own: own.txid, row };
    });
    expect(committed.row).toEqual({ id: 1, txid: committed.own });
    await expect(
      db.transaction(async (manager) => {
        await transactionRows(manager, insert, [2]);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await db.query(`SELECT id FROM ${table} ORDER BY id`)).toEqual([{ id: 1 }]);
    // Named, so each connection parses it once.
    const [prepared] = (await db.transaction(async (manager) => {
      await transactionRows(manager, `SELECT id FROM ${table} WHERE id = $1`, [1]);
      return manager.query('SELECT name FROM pg_prepared_statements WHERE statement LIKE $1', [`%FROM ${table} WHERE id = $1%`]);
    })) as { name: string }[];
    expect(prepared?.name).toBe(preparedStatementName(`SELECT id FROM ${table} WHERE id = $1`));
  });

  it('refuses a manager that is not in a transaction', async () => {
    await expect(transactionRows(db.manager, 'SELECT 1', [])).rejects.toThrow('needs the EntityManager of an open transaction');
  });
});
