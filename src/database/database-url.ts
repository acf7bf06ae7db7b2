/** `scheme://authority`, the `/path` (the database name) and the rest (`?host=…` parameters). */
const PARTS = /^([a-z][a-z0-9+.-]*:\/\/[^/?#]*)(\/[^?#]*)?(.*)$/i;

function partsOf(url: string): RegExpExecArray {
  const parts = PARTS.exec(url);
  if (!parts) throw new Error('DATABASE_URL is not a postgres:// URL');
  return parts;
}

/**
 * The database a `DATABASE_URL` names (its path, decoded; '' when it names none). Takes every form
 * `pg` takes, the Unix-socket one with an empty host included (`postgresql://postgres@/glimpse?host=/var/run/postgresql`,
 * docs/configuration.md), which WHATWG `URL` refuses. Throws when `url` is not a URL.
 */
export function databaseNameOf(url: string): string {
  return decodeURIComponent((partsOf(url)[2] ?? '').replace(/^\//, ''));
}

/**
 * `url` naming database `name` instead (user, password, host, port and parameters such as `?host=`
 * kept), e.g. the server's `postgres` maintenance database of a `DATABASE_URL`. Throws as {@link databaseNameOf}.
 */
export function withDatabaseName(url: string, name: string): string {
  const [, authority, , rest] = partsOf(url);
  return `${authority}/${encodeURIComponent(name)}${rest}`;
}
