import { databaseNameOf, withDatabaseName } from './database-url';

describe('database URLs', () => {
  it('reads and replaces the database of a TCP URL', () => {
    const url = 'postgres://glimpse:s3cret@db:5432/glimpse?sslmode=require';
    expect(databaseNameOf(url)).toBe('glimpse');
    expect(withDatabaseName(url, 'postgres')).toBe('postgres://glimpse:s3cret@db:5432/postgres?sslmode=require');
  });

  it('takes the Unix-socket form with an empty host, which WHATWG URL refuses', () => {
    const url = 'postgresql://postgres@/glimpse?host=/var/run/postgresql';
    expect(databaseNameOf(url)).toBe('glimpse');
    expect(withDatabaseName(url, 'bench db')).toBe('postgresql://postgres@/bench%20db?host=/var/run/postgresql');
  });

  it('gives an empty name for a URL without a database, and throws on what is not a URL', () => {
    expect(databaseNameOf('postgres://127.0.0.1:5432')).toBe('');
    expect(withDatabaseName('postgres://127.0.0.1:5432', 'x')).toBe('postgres://127.0.0.1:5432/x');
    expect(() => databaseNameOf('not a url')).toThrow('DATABASE_URL is not a postgres:// URL');
  });
});
