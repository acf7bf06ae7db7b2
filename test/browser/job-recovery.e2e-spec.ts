import { DataSource, Repository } from 'typeorm';
import { Clock } from '../../src/common/clock';
import { EventRecord } from '../../src/events/event.entity';
import { ScreenshotFailedData } from '../../src/events/event-types';
import { CaptureProcessor } from '../../src/screenshots/capture.processor';
import { CustomerMessage } from '../../src/results/customer-messages';
import { ScreenshotJobLifecycle } from '../../src/screenshots/screenshot-job-lifecycle';
import { HousekeepingProcessor } from '../../src/screenshots/housekeeping.processor';
import { ScreenshotJob } from '../../src/screenshots/screenshot-job.entity';
import { startPageServer, PageServer } from '../support/page-server';
import { startTestApp, TestApp } from '../support/test-app';

/** A clock the test moves by hand. */
class ManualClock extends Clock {
  current = new Date();
  now(): Date {
    return new Date(this.current);
  }
}

describe('a job never stays processing forever', () => {
  const clock = new ManualClock();
  let t: TestApp;
  let pages: PageServer;
  let jobs: Repository<ScreenshotJob>;
  let key: string;
  let accountId: string;

  beforeAll(async () => {
    pages = await startPageServer({ '/ok': '<html><body>ok</body></html>' });
    // Processors off: the test plays the queue's part, as a redelivery after a crash would.
    t = await startTestApp({ runProcessors: false, override: (b) => b.overrideProvider(Clock).useValue(clock) });
    jobs = t.get(DataSource).getRepository(ScreenshotJob);
    ({ key, accountId } = await t.createKey());
  });
  afterAll(async () => {
    await t.close();
    await pages.close();
  });

  async function acceptJob(url = `${pages.url}/ok`): Promise<string> {
    const res = await t.request('POST', '/v1/screenshot', { key, body: { url } });
    expect(res.status).toBe(202);
    return res.body.id;
  }

  it('a job redelivered after its worker died mid-capture is captured again and ends done', async () => {
    const id = await acceptJob();
    // The first worker claimed it and died: status processing, one attempt started.
    await jobs.update({ id }, { status: 'processing', attempts: 1, startedAt: clock.now() });
    await t.get(CaptureProcessor).process(id);
    expect(await jobs.findOneByOrFail({ id })).toMatchObject({ status: 'done', attempts: 2, error: null });
  });

  it('a job whose workers died during every attempt ends failed instead of looping', async () => {
    const id = await acceptJob();
    await jobs.update({ id }, { status: 'processing', attempts: 2, startedAt: clock.now() });
    await t.get(CaptureProcessor).process(id);
    const job = await jobs.findOneByOrFail({ id });
    expect(job.status).toBe('failed');
    expect(job.error).toMatch(/worker stopped/);
  });

  it('a finished job is never captured again or moved back', async () => {
    const id = await acceptJob();
    await t.get(CaptureProcessor).process(id);
    const done = await jobs.findOneByOrFail({ id });
    expect(done.status).toBe('done');
    await t.get(CaptureProcessor).process(id);
    await t.get(ScreenshotJobLifecycle).fail(id, new CustomerMessage('late failure'));
    expect(await jobs.findOneByOrFail({ id })).toEqual(done);
  });

  it('the sweep fails a job stuck in processing past its time budget and publishes screenshot.failed', async () => {
    const id = await acceptJob();
    await jobs.update({ id }, { status: 'processing', attempts: 1, startedAt: clock.now() });
    const recent = await acceptJob();
    await jobs.update({ id: recent }, { status: 'processing', attempts: 1, startedAt: clock.now() });

    clock.current = new Date(clock.current.getTime() + 60 * 60 * 1000);
    await jobs.update({ id: recent }, { startedAt: clock.now() });
    const result = await t.get(HousekeepingProcessor).sweep();

    expect(result.stuckJobsFailed).toBe(1);
    expect(await jobs.findOneByOrFail({ id })).toMatchObject({ status: 'failed', error: expect.stringMatching(/did not finish/) });
    expect((await jobs.findOneByOrFail({ id: recent })).status).toBe('processing');
    const events = await t.get(DataSource).getRepository(EventRecord).findBy({ accountId, type: 'screenshot.failed' });
    expect(events.map((e) => (e.data as ScreenshotFailedData).screenshotId)).toContain(id);
  });

  it('serves the result file for RESULT_TTL_DAYS (30), then answers 404; the sweep deletes it by job row', async () => {
    clock.current = new Date();
    const id = await acceptJob();
    await t.get(CaptureProcessor).process(id);
    const job = await t.request('GET', `/v1/screenshot/${id}`, { key });
    expect((await fetch(job.body.url)).status).toBe(200);

    clock.current = new Date(Date.now() + 29 * 24 * 3600 * 1000);
    expect((await fetch(job.body.url)).status).toBe(200);
    clock.current = new Date(Date.now() + 31 * 24 * 3600 * 1000);
    expect((await fetch(job.body.url)).status).toBe(404);
    expect((await t.get(HousekeepingProcessor).sweep()).filesDeleted).toBeGreaterThanOrEqual(1);
    expect((await jobs.findOneByOrFail({ id })).resultDeletedAt).toEqual(clock.current);
    // Deleted, not merely hidden: 404 even for a clock back at the present.
    clock.current = new Date();
    expect((await fetch(job.body.url)).status).toBe(404);
  });
});
