import type { ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import { ApiError } from './api-error';
import { IdKind, isId } from './ids';

/**
 * The cursor of a list paged newest first by `(createdAt, id)` (CONTRACT.md: `GET /v1/runs`,
 * `GET /v1/monitors`, `GET /v1/profiles`, `GET /v1/crawls`): the last row's position as base64url text.
 */
export function encodeCursor(row: { createdAt: Date; id: string }): string {
  return Buffer.from(`${row.createdAt.toISOString()}|${row.id}`).toString('base64url');
}

/**
 * The position `cursor` names, for rows with ids of `kind`. Throws 400 `VALIDATION_FAILED` naming
 * `cursor` when it is not one {@link encodeCursor} made for such a row.
 */
export function decodeCursor(cursor: string, kind: IdKind): { createdAt: Date; id: string } {
  const [iso, id, extra] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  const createdAt = new Date(iso ?? '');
  if (extra !== undefined || !id || !isId(kind, id) || Number.isNaN(createdAt.getTime())) {
    throw ApiError.validation([{ field: 'cursor', message: 'must be a nextCursor returned by this endpoint' }]);
  }
  return { createdAt, id };
}

/** Page size of a cursor-paged list when the query names no `limit` (CONTRACT.md). */
export const DEFAULT_PAGE_SIZE = 20;

/**
 * One page of the rows `qb` selects (its filters already applied), newest first by `(created_at, id)`
 * of `qb`'s main alias: `query.limit` rows (default {@link DEFAULT_PAGE_SIZE}) after `query.cursor`'s
 * position, and the cursor of the next page (null on the last). Throws 400 `VALIDATION_FAILED` naming
 * `cursor` when it is not one this kind of list issued ({@link decodeCursor}).
 */
export async function newestFirstPage<T extends ObjectLiteral & { createdAt: Date; id: string }>(
  qb: SelectQueryBuilder<T>,
  query: { limit?: number; cursor?: string },
  kind: IdKind,
): Promise<{ rows: T[]; nextCursor: string | null }> {
  const limit = query.limit ?? DEFAULT_PAGE_SIZE;
  const a = qb.alias;
  qb.orderBy(`${a}.created_at`, 'DESC')
    .addOrderBy(`${a}.id`, 'DESC')
    .take(limit + 1);
  if (query.cursor !== undefined) qb.andWhere(`(${a}.created_at, ${a}.id) < (:createdAt, :id)`, decodeCursor(query.cursor, kind));
  const rows = await qb.getMany();
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return { rows: page, nextCursor: rows.length > limit && last ? encodeCursor(last) : null };
}
