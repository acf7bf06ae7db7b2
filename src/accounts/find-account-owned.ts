import { FindOptionsWhere, Repository } from 'typeorm';
import { IdKind, isId } from '../common/ids';
import type { AccountOwned } from './account-owned.entity';

/**
 * The row `id` of account `accountId` in `rows`, or null when `id` is not a `kind` id (`isId`), is
 * unknown or is another account's: the one look-up behind every "404 for another account's resource"
 * (docs/CONTRACT.md, "Identifiers").
 */
export function findAccountOwned<T extends AccountOwned>(
  rows: Repository<T>,
  kind: IdKind,
  id: string,
  accountId: string,
): Promise<T | null> {
  return isId(kind, id) ? rows.findOneBy({ id, accountId } as FindOptionsWhere<T>) : Promise.resolve(null);
}
