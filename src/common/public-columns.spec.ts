import { publicColumns } from './public-columns';

describe('publicColumns', () => {
  it('copies the named columns in their order, dates as ISO 8601 and null as null', () => {
    const row = { id: 'x_1', name: 'n', secret: 's', createdAt: new Date(Date.UTC(2026, 10, 20, 12)), lastUsedAt: null as Date | null };
    const view = publicColumns(row, ['id', 'createdAt', 'lastUsedAt', 'name']);
    expect(view).toEqual({ id: 'x_1', createdAt: '2026-11-20T12:00:00.000Z', lastUsedAt: null, name: 'n' });
    expect(Object.keys(view)).toEqual(['id', 'createdAt', 'lastUsedAt', 'name']);
  });
});
