import { Repository } from 'typeorm';
import { ApiError } from '../common/api-error';
import { IdKind, isId } from '../common/ids';
import { entityFromRow, sqlRows } from '../sql/sql';
import type { AccountOwned } from './account-owned.entity';

/**
 * The row `id` of account `accountId` in `rows`, or null when `id` is not a `kind` id (`isId`), is
 * unknown or is another account's: the one look-up behind every "404 for another account's resource"
 * (docs/CONTRACT.md, "Identifiers"). One prepared statement per table (`sqlRows`): a client polling its
 * job repeats this look-up, so it is neither parsed nor planned again, and skips TypeORM's query
 * builder (docs/performance.md#accept-path).
 */
export async function findAccountOwned<T extends AccountOwned>(
  rows: Repository<T>,
  kind: IdKind,
  id: string,
  accountId: string,
): Promise<T | null> {
  if (!isId(kind, id)) return null;
  const { tablePath } = rows.metadata;
  const [row] = await sqlRows<Record<string, unknown>>(
    rows.manager.connection,
    `SELECT * FROM "${tablePath}" WHERE id = $1 AND account_id = $2`,
    [id, accountId],
  );
  return row ? entityFromRow(rows, row) : null;
}

/**
 * The row as {@link findAccountOwned} finds it; throws 404 `NOT_FOUND` ("`what` not found") where that
 * finds none, so another account's row is as unknown as a missing one (docs/CONTRACT.md, "Identifiers").
 */
export async function requireAccountOwned<T extends AccountOwned>(
  rows: Repository<T>,
  kind: IdKind,
  id: string,
  accountId: string,
  what: string,
): Promise<T> {
  const row = await findAccountOwned(rows, kind, id, accountId);
  if (!row) throw ApiError.notFound(what);
  return row;
}
