import dataSource from './data-source';

/** Applies pending migrations (`npm run migration:run` does the same through the TypeORM CLI). */
async function main(): Promise<void> {
  await dataSource.initialize();
  try {
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    process.stdout.write(applied.length ? `Applied ${applied.map((m) => m.name).join(', ')}\n` : 'Database schema is up to date\n');
  } finally {
    await dataSource.destroy();
  }
}

main().catch((err) => {
  process.stderr.write(`Migrations failed: ${(err as Error).message}\n`);
  process.exit(1);
});
