import { EndlessAnswer, startEndlessEndpoint } from '../support/endless-endpoint';
import { PageServer, startPageServer } from '../support/page-server';
import { startTestApp, TestApp, waitForJob } from '../support/test-app';

/**
 * A capture delivered to a customer-chosen endpoint whose answer never ends (CONTRACT.md, "Tenancy:
 * fair share and isolation", customer-chosen endpoints; "Storage destinations"): the answer is read to
 * 1 MiB, the connection closed, and the job fails `storage upload failed: …`, for a presigned `upload`
 * URL and for a destination's S3 endpoint (`storage`) alike.
 */
describe('storage delivery to an endpoint whose answer never ends', () => {
  let t: TestApp;
  let key: string;
  let pages: PageServer;
  let endless: Awaited<ReturnType<typeof startEndlessEndpoint>>;

  beforeAll(async () => {
    pages = await startPageServer({ '/page': '<html><body style="background:#2e8b57"><h1>Stored</h1></body></html>' });
    endless = await startEndlessEndpoint();
    t = await startTestApp();
    ({ key } = await t.createKey('pro'));
  });

  afterAll(async () => {
    await t?.close();
    await endless?.close();
    await pages?.close();
  });

  async function capture(body: Record<string, unknown>): Promise<any> {
    const res = await t.request('POST', '/v1/screenshot', { key, body: { url: `${pages.url}/page`, width: 320, height: 240, ...body } });
    expect(res.status).toBe(202);
    return waitForJob(t, key, res.body.id);
  }

  /** Every answer the endpoint began since `from`, once each connection closed. */
  const answersFrom = (from: number): Promise<EndlessAnswer[]> => Promise.all(endless.answers.slice(from));

  it('a presigned upload URL: the job fails once 1 MiB of the answer was read, the connection closed by the service', async () => {
    const from = endless.answers.length;
    const job = await capture({ upload: { url: `${endless.url}/presigned?X-Amz-Signature=abc` } });
    expect(job).toMatchObject({ status: 'failed', error: "storage upload failed: the endpoint's answer was larger than 1 MiB" });
    const answers = await answersFrom(from);
    // Not retried: a longer answer would not be shorter the next time.
    expect(answers.map((a) => `${a.method} ${a.path.split('?')[0]}`)).toEqual(['PUT /presigned']);
    expect(answers[0].closedByClient).toBe(true);
    expect(answers[0].written).toBeLessThanOrEqual(16 * 1024 * 1024);
  });

  it('a storage destination: the same, through the S3 client', async () => {
    const created = await t.request('POST', '/v1/storage-destinations', {
      key,
      body: { type: 's3', bucket: 'shots', endpoint: endless.url, forcePathStyle: true, accessKeyId: 'id', secretAccessKey: 'secret' },
    });
    expect(created.status).toBe(201);
    const from = endless.answers.length;
    const job = await capture({ storage: { destinationId: created.body.id } });
    expect(job).toMatchObject({ status: 'failed', error: "storage upload failed: the endpoint's answer was larger than 1 MiB" });
    const answers = await answersFrom(from);
    expect(answers.map((a) => a.method)).toEqual(['PUT']);
    expect(answers[0].closedByClient).toBe(true);
    expect(answers[0].written).toBeLessThanOrEqual(16 * 1024 * 1024);
  });
});
