import { ApiError } from './api-error';
import { IdKind, isId } from './ids';

/**
 * The cursor of a list paged newest first by `(createdAt, id)` (CONTRACT.md: `GET /v1/runs`,
 * `GET /v1/monitors`, `GET /v1/profiles`): the last row's position as base64url text.
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
