import { DataSource, QueryRunner } from 'typeorm';
import { dataSourceOptions } from '../../src/database/data-source';
import { JobArtifacts1795800496486 } from '../../src/database/migrations/1795800496486-JobArtifacts';

/*
 * Migration JobArtifacts moves a job's result columns into `artifacts` keyed by kind, and back in
 * `down`, on rows of every shape: all artifacts (with nulls inside `storage` and the metadata, which must
 * survive), the image only, none. Run inside one transaction that is rolled back (PostgreSQL's DDL is
 * transactional), so the worker's database keeps its schema.
 */
describe('migration JobArtifacts', () => {
  let dataSource: DataSource;
  let runner: QueryRunner;

  beforeAll(async () => {
    dataSource = new DataSource(dataSourceOptions({ databaseUrl: process.env.GLIMPSE_TEST_DATABASE_URL as string }));
    await dataSource.initialize();
    runner = dataSource.createQueryRunner();
    await runner.startTransaction();
    // The rows below name no account or key: foreign keys are not checked in this transaction.
    await runner.query('SET LOCAL session_replication_role = replica');
  });

  afterAll(async () => {
    await runner.rollbackTransaction();
    await runner.release();
    await dataSource.destroy();
  });

  const OLD_COLUMNS = `id, result_file, thumbnail_file, extracted, storage`;
  const oldRows = () => runner.query(`SELECT ${OLD_COLUMNS} FROM screenshot_jobs WHERE id LIKE 'scr_mig_%' ORDER BY id`);
  const expiryIndex = async () =>
    (
      (await runner.query(`SELECT indexdef FROM pg_indexes WHERE indexname = 'IDX_screenshot_jobs_result_expiry'`)) as {
        indexdef: string;
      }[]
    )[0].indexdef;

  it('moves the result columns into artifacts by kind and back, losing nothing', async () => {
    const migration = new JobArtifacts1795800496486();
    await migration.down(runner);
    expect(await expiryIndex()).toContain('result_file IS NOT NULL');
    const job = `account_id, api_key_id, status, target_url, width, height, full_page, format, delay_ms, completed_at`;
    const done = `'acc_mig', 'key_mig', 'done', 'https://example.com', 1280, 800, false, 'png', 0, now()`;
    await runner.query(
      `INSERT INTO screenshot_jobs (${OLD_COLUMNS}, ${job}) VALUES
        ('scr_mig_all', 'a.png', 't.png', $1, $2, ${done}),
        ('scr_mig_image', 'b.png', NULL, NULL, NULL, ${done}),
        ('scr_mig_none', NULL, NULL, NULL, NULL, ${done})`,
      [
        { markdown: { file: 'm.md', bytes: 1, truncated: false }, metadata: { title: null } },
        { destinationId: null, bucket: null, key: null, etag: '"e"' },
      ],
    );
    const before = await oldRows();

    await migration.up(runner);
    expect(await runner.query(`SELECT id, artifacts FROM screenshot_jobs WHERE id LIKE 'scr_mig_%' ORDER BY id`)).toEqual([
      {
        id: 'scr_mig_all',
        artifacts: {
          image: 'a.png',
          thumbnail: 't.png',
          extracted: { markdown: { file: 'm.md', bytes: 1, truncated: false }, metadata: { title: null } },
          storage: { destinationId: null, bucket: null, key: null, etag: '"e"' },
        },
      },
      { id: 'scr_mig_image', artifacts: { image: 'b.png' } },
      { id: 'scr_mig_none', artifacts: {} },
    ]);
    expect(await expiryIndex()).toContain(`artifacts <> '{}'::jsonb`);

    await migration.down(runner);
    expect(await oldRows()).toEqual(before);
    await migration.up(runner);
  });
});
