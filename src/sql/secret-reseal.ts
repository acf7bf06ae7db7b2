import type { ObjectLiteral, Repository } from 'typeorm';
import { SecretCipher, SecretUnreadableError } from '../common/secret-cipher';
import { columnOf, sqlRows } from './sql';

/** Rows read per batch by {@link resealColumns}. */
const RESEAL_BATCH_SIZE = 500;

/**
 * What a re-seal did (`webhook:reseal --json` prints the sum over every table): rows moved to the first
 * key, rows already under it, and the ids of rows holding a secret no configured key opens.
 */
export interface ResealReport {
  resealed: number;
  alreadyCurrent: number;
  unreadable: string[];
}

/** Thrown by {@link resealColumns} when no secret key is configured: there is nothing to seal with. */
export class NoSecretKeyError extends Error {}

/** The sum of `reports`, in their order. */
export function sumResealReports(reports: ResealReport[]): ResealReport {
  return {
    resealed: reports.reduce((n, r) => n + r.resealed, 0),
    alreadyCurrent: reports.reduce((n, r) => n + r.alreadyCurrent, 0),
    unreadable: reports.flatMap((r) => r.unreadable),
  };
}

/**
 * Re-seals the `columns` (properties holding {@link SecretCipher.seal} output bound to the row's `id`,
 * null allowed) of every row of `repository`'s table under the first configured key, for a key
 * rotation (docs/webhooks.md#configuration: add the new key first, run `webhook:reseal`, then drop the
 * old key). Reads rows by id in batches of {@link RESEAL_BATCH_SIZE}. A row is written only if none of
 * its sealed columns changed since it was read (a secret rotated meanwhile is sealed under the first
 * key already). A row with a secret no configured key opens is reported and left as it is.
 * Throws {@link NoSecretKeyError} when no key is configured.
 */
export async function resealColumns<E extends ObjectLiteral & { id: string }>(
  repository: Repository<E>,
  cipher: SecretCipher,
  columns: ReadonlyArray<keyof E & string>,
): Promise<ResealReport> {
  if (!cipher.encrypts) throw new NoSecretKeyError('no WEBHOOK_SECRET_KEY or WEBHOOK_SECRET_KEYS is configured: nothing to seal with');
  const names = columns.map((property) => columnOf(repository, property).databaseName);
  const quoted = names.map((name) => `"${name}"`);
  const table = `"${repository.metadata.tablePath}"`;
  const select = `SELECT id, ${quoted.join(', ')} FROM ${table} WHERE id > $1 ORDER BY id LIMIT ${RESEAL_BATCH_SIZE}`;
  const assignments = quoted.map((name, i) => `${name} = $${i + 2}`).join(', ');
  const unchanged = quoted.map((name, i) => `${name} IS NOT DISTINCT FROM $${names.length + i + 2}`).join(' AND ');
  const update = `UPDATE ${table} SET ${assignments} WHERE id = $1 AND ${unchanged} RETURNING id`;
  const dataSource = repository.manager.connection;

  const report: ResealReport = { resealed: 0, alreadyCurrent: 0, unreadable: [] };
  const stale = (sealed: string | null): sealed is string => sealed !== null && !cipher.isCurrent(sealed);
  for (let after = ''; ;) {
    const rows = await sqlRows<{ id: string } & Record<string, string | null>>(dataSource, select, [after]);
    if (!rows.length) return report;
    for (const row of rows) {
      const read = names.map((name) => row[name]);
      if (!read.some(stale)) {
        report.alreadyCurrent++;
        continue;
      }
      let resealed: Array<string | null>;
      try {
        resealed = read.map((sealed) => (stale(sealed) ? cipher.seal(cipher.open(sealed, row.id), row.id) : sealed));
      } catch (err) {
        if (!(err instanceof SecretUnreadableError)) throw err;
        report.unreadable.push(row.id);
        continue;
      }
      const updated = await sqlRows(dataSource, update, [row.id, ...resealed, ...read]);
      if (updated.length) report.resealed++;
      else report.alreadyCurrent++;
    }
    after = rows[rows.length - 1].id;
  }
}
