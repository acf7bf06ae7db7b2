import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/database/data-source';

describe('migrations', () => {
  it('match the entities: generating a migration after running them yields nothing', async () => {
    const dataSource = new DataSource(dataSourceOptions({ databaseUrl: process.env.GLIMPSE_TEST_DATABASE_URL as string }));
    await dataSource.initialize();
    try {
      const pending = await dataSource.driver.createSchemaBuilder().log();
      expect(pending.upQueries.map((q) => q.query)).toEqual([]);
      expect(await dataSource.showMigrations()).toBe(false);
    } finally {
      await dataSource.destroy();
    }
  });
});
