import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/database/data-source';
import { GroupCommit, MAX_GROUP_STATEMENTS } from '../../src/sql/group-commit';

/**
 * The group commit of one API key's acceptance statements (src/sql/group-commit.ts,
 * docs/performance.md#accept-path) on real PostgreSQL: statements that arrive while one runs share
 * one transaction, see each other's writes, and fail only their own callers.
 */
describe('group commit (service, real PostgreSQL)', () => {
  const databaseUrl = process.env.GLIMPSE_TEST_DATABASE_URL as string;
  const table = `group_commit_${process.pid}`;
  let db: DataSource;
  let commits: GroupCommit;

  /** Adds `amount` to the group's counter row; returns the total after it and the transaction it ran in. */
  const addText = `INSERT INTO ${table} (grp, total) VALUES ($1, $2) ON CONFLICT (grp) DO UPDATE SET total = ${table}.total + EXCLUDED.total
                   RETURNING total, txid_current()::text AS txid`;
  const add = (grp: string, amount: number) => commits.run<{ total: number; txid: string }>(grp, addText, [grp, amount]);
  const totalOf = async (grp: string) =>
    ((await db.query(`SELECT total FROM ${table} WHERE grp = $1`, [grp])) as { total: number }[])[0]?.total ?? 0;

  beforeAll(async () => {
    Logger.overrideLogger(false);
    db = await new DataSource(dataSourceOptions({ databaseUrl })).initialize();
    await db.query(`CREATE TABLE ${table} (grp text PRIMARY KEY, total int NOT NULL CHECK (total <= 1000))`);
    commits = new GroupCommit(db);
  });

  afterAll(async () => {
    await db?.query(`DROP TABLE IF EXISTS ${table}`);
    await db?.destroy();
    Logger.overrideLogger(['error', 'warn']);
  });

  it('runs a lone statement at once, and commits those that arrive meanwhile together, in order, each seeing the ones before', async () => {
    const answers = await Promise.all(Array.from({ length: 11 }, () => add('a', 1)));
    const rows = answers.map(([row]) => row);
    // Arrival order is the order of the running total: 1, 2, …, 11, exact as if each had committed alone.
    expect(rows.map((r) => r.total)).toEqual(Array.from({ length: 11 }, (_, i) => i + 1));
    // The first ran alone; the ten that arrived while it ran shared one transaction.
    expect(new Set(rows.map((r) => r.txid)).size).toBe(2);
    expect(rows[1].txid).not.toBe(rows[0].txid);
    expect(new Set(rows.slice(1).map((r) => r.txid)).size).toBe(1);
    expect(await totalOf('a')).toBe(11);
  });

  it(`puts at most ${MAX_GROUP_STATEMENTS} statements in one transaction`, async () => {
    const count = 1 + MAX_GROUP_STATEMENTS + 3;
    const rows = (await Promise.all(Array.from({ length: count }, () => add('b', 1)))).map(([row]) => row);
    const perTransaction = new Map<string, number>();
    for (const { txid } of rows) perTransaction.set(txid, (perTransaction.get(txid) ?? 0) + 1);
    expect([...perTransaction.values()]).toEqual([1, MAX_GROUP_STATEMENTS, 3]);
    expect(await totalOf('b')).toBe(count);
  });

  it('fails only the statement that fails: the rest of its group is committed, each on its own', async () => {
    // 995 + 1 + 1 fit the CHECK (total <= 1000); the +10 between them does not.
    await add('c', 995);
    const outcomes = await Promise.allSettled([add('c', 1), add('c', 1), add('c', 10), add('c', 1)]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(((outcomes[2] as PromiseRejectedResult).reason as Error).message).toMatch(/check constraint/);
    expect(await totalOf('c')).toBe(998);
  });

  it('does not make one group wait for another', async () => {
    // A statement of group d holds its connection for 1 s; group e's statements still run at once.
    const slow = commits.run('d', 'SELECT pg_sleep(1)', []);
    const started = Date.now();
    await add('e', 1);
    const waited = Date.now() - started;
    await slow;
    expect(waited).toBeLessThan(1000);
  });
});
