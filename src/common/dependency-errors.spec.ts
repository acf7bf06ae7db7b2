import { isDependencyUnavailable } from './dependency-errors';

describe('isDependencyUnavailable', () => {
  const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

  it('recognises a refused, reset or timed-out connection and PostgreSQL shutting down or starting up', () => {
    expect(isDependencyUnavailable(withCode('ECONNREFUSED'))).toBe(true);
    expect(isDependencyUnavailable(withCode('ECONNRESET'))).toBe(true);
    expect(isDependencyUnavailable(withCode('57P01', 'terminating connection due to administrator command'))).toBe(true);
    expect(isDependencyUnavailable(withCode('57P03', 'the database system is starting up'))).toBe(true);
    expect(isDependencyUnavailable(withCode('08006'))).toBe(true);
    expect(isDependencyUnavailable(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isDependencyUnavailable(new Error('timeout exceeded when trying to connect'))).toBe(true);
  });

  it('looks through TypeORM query errors and aggregate errors (every address of localhost refused)', () => {
    expect(isDependencyUnavailable(Object.assign(new Error('query failed'), { driverError: withCode('57P01') }))).toBe(true);
    expect(isDependencyUnavailable(new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')], ''))).toBe(true);
  });

  it('leaves client mistakes and bugs alone: they are not a 503', () => {
    expect(isDependencyUnavailable(withCode('23505', 'duplicate key value violates unique constraint'))).toBe(false);
    expect(isDependencyUnavailable(withCode('22P02', 'invalid input syntax'))).toBe(false);
    expect(isDependencyUnavailable(new TypeError('x is undefined'))).toBe(false);
    expect(isDependencyUnavailable(null)).toBe(false);
    expect(isDependencyUnavailable('ECONNREFUSED')).toBe(false);
  });
});
