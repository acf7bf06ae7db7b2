import { MAX_PREPARED_STATEMENTS, MAX_PREPARED_TEXT_LENGTH, preparedStatementName } from './sql';

describe('preparedStatementName', () => {
  it('runs a text longer than the limit unnamed', () => {
    expect(preparedStatementName(`SELECT '${'x'.repeat(MAX_PREPARED_TEXT_LENGTH)}'`)).toBeUndefined();
  });

  it('names one text once, the same name every time, and runs texts past the cap unnamed', () => {
    const first = preparedStatementName('SELECT 1');
    expect(first).toMatch(/^glimpse_\d+$/);
    expect(preparedStatementName('SELECT 1')).toBe(first);
    const names = new Set([first]);
    for (let i = 2; i <= MAX_PREPARED_STATEMENTS; i++) names.add(preparedStatementName(`SELECT ${i}`));
    expect(names.size).toBe(MAX_PREPARED_STATEMENTS);
    expect(preparedStatementName('SELECT past the cap')).toBeUndefined();
    expect(preparedStatementName('SELECT 1')).toBe(first);
  });
});
