import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { EventRecord } from '../../src/events/event.entity';
import { STORAGE_FAILURE_MESSAGE } from '../../src/results/customer-messages';
import { PageServer, startPageServer } from '../support/page-server';
import { startTestApp, TestApp, waitForJob } from '../support/test-app';

describe('internal failures reach customers as safe messages', () => {
  let t: TestApp;
  let pages: PageServer;
  let key: string;
  let accountId: string;
  const dir = mkdtempSync(join(tmpdir(), 'glimpse-broken-storage-'));
  // A regular file where the storage directory should be: every result write fails (ENOTDIR/EEXIST).
  const storageDir = join(dir, 'not-a-directory');

  beforeAll(async () => {
    writeFileSync(storageDir, 'this is a file');
    pages = await startPageServer({ '/plain': '<html><body><h1>Hello</h1></body></html>' });
    t = await startTestApp({ env: { STORAGE_DIR: storageDir } });
    ({ key, accountId } = await t.createKey());
  });

  afterAll(async () => {
    await t.close();
    await pages.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a storage failure fails the job and its screenshot.failed event without the path or the stack', async () => {
    const res = await t.request('POST', '/v1/screenshot', { key, body: { url: `${pages.url}/plain`, width: 300, height: 200 } });
    expect(res.status).toBe(202);
    const job = await waitForJob(t, key, res.body.id);
    expect(job).toMatchObject({ status: 'failed', error: STORAGE_FAILURE_MESSAGE, url: null });
    const events = await t.get(DataSource).getRepository(EventRecord).findBy({ accountId, type: 'screenshot.failed' });
    expect(events).toHaveLength(1);
    expect(events[0].data).toEqual({ screenshotId: job.id, url: `${pages.url}/plain`, error: STORAGE_FAILURE_MESSAGE, targetStatus: 200 });
    const shown = JSON.stringify([job, events[0].data]);
    expect(shown).not.toContain(dir);
    expect(shown).not.toMatch(/ENOTDIR|EEXIST|at .*\.js:\d+/);
  });
});
