import { DataSource } from 'typeorm';
import { decodePng, isJpeg, pixel, pngSize } from '../support/images';
import { startTestApp, TestApp, waitForJob } from '../support/test-app';

describe('POST /v1/screenshot/upload', () => {
  let t: TestApp;
  let key: string;
  let accountId: string;

  beforeAll(async () => {
    t = await startTestApp();
    ({ key, accountId } = await t.createKey());
  });

  afterAll(async () => {
    await t.close();
  });

  const page = (colour: string) => `<!doctype html><html><body style="margin:0;background:${colour}"><h1>uploaded</h1></body></html>`;

  async function upload(
    file: { content: string | Buffer; type?: string; name?: string } | null,
    fields: Record<string, string> = {},
    headers: Record<string, string> = { authorization: `Bearer ${key}` },
  ) {
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) form.append(name, value);
    if (file)
      form.append(
        'file',
        new Blob([typeof file.content === 'string' ? file.content : new Uint8Array(file.content)], { type: file.type ?? 'text/html' }),
        file.name ?? 'page.html',
      );
    const res = await fetch(`${t.baseUrl}/v1/screenshot/upload`, { method: 'POST', headers, body: form });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  }

  async function jobCount(): Promise<number> {
    const [{ count }] = await t
      .get(DataSource)
      .query('SELECT count(*)::int AS count FROM screenshot_jobs WHERE account_id = $1', [accountId]);
    return count;
  }

  it('answers 202 with the job shape of POST /v1/screenshot and renders the document as uploaded', async () => {
    const res = await upload({ content: page('rgb(0, 128, 0)') });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({
      status: 'pending',
      url: null,
      error: null,
      format: 'png',
      width: 1280,
      height: 800,
      fullPage: false,
      clipped: false,
    });
    expect(res.body.id).toMatch(/^scr_[0-9A-Za-z]{24}$/);
    const job = await waitForJob(t, key, res.body.id);
    expect(job).toMatchObject({ status: 'done', error: null });
    const png = Buffer.from(await (await fetch(job.url)).arrayBuffer());
    expect(pngSize(png)).toEqual({ width: 1280, height: 800 });
    expect(pixel(decodePng(png), 5, 795)).toEqual([0, 128, 0]);
    // The stored document is removed once the job has ended.
    const [{ count }] = await t.get(DataSource).query('SELECT count(*)::int AS count FROM screenshot_uploads WHERE job_id = $1', [job.id]);
    expect(count).toBe(0);
  });

  it('takes the capture options as form fields, converted and validated like the JSON ones', async () => {
    const res = await upload({ content: page('white') }, { width: '640', height: '480', format: 'jpeg', fullPage: 'false', delay: '0' });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ width: 640, height: 480, format: 'jpeg', fullPage: false });
    const job = await waitForJob(t, key, res.body.id);
    expect(job.status).toBe('done');
    expect(isJpeg(Buffer.from(await (await fetch(job.url)).arrayBuffer()))).toBe(true);
  });

  it.each([
    [{ width: 'abc' }, 'width'],
    [{ width: '50' }, 'width'],
    [{ height: '1.5' }, 'height'],
    [{ fullPage: 'yes' }, 'fullPage'],
    [{ format: 'bmp' }, 'format'],
    [{ delay: '20000' }, 'delay'],
    [{ url: 'https://example.com' }, 'url'],
  ])('rejects invalid or unknown form fields %j with 400 VALIDATION_FAILED and no job', async (fields, field) => {
    const before = await jobCount();
    const res = await upload({ content: page('white') }, fields);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_FAILED');
    expect(res.body.details.fields[0].field).toBe(field);
    expect(await jobCount()).toBe(before);
  });

  it('rejects a request without a file part with 400 VALIDATION_FAILED', async () => {
    const res = await upload(null, { width: '800' });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_FAILED');
    expect(res.body.details.fields[0].field).toBe('file');
  });

  it('rejects a document over 10 MiB with 413 PAYLOAD_TOO_LARGE and no job', async () => {
    const before = await jobCount();
    const res = await upload({ content: Buffer.alloc(10 * 1024 * 1024 + 1, 'a') });
    expect(res.status).toBe(413);
    expect(res.body.code).toBe('PAYLOAD_TOO_LARGE');
    expect(await jobCount()).toBe(before);
  });

  it('accepts a document of exactly 10 MiB', async () => {
    const head = page('white');
    const res = await upload({ content: Buffer.concat([Buffer.from(head), Buffer.alloc(10 * 1024 * 1024 - head.length, ' ')]) });
    expect(res.status).toBe(202);
    expect((await waitForJob(t, key, res.body.id)).status).toBe('done');
  });

  it('rejects a file that is not text/html with 415 UNSUPPORTED_MEDIA_TYPE and no job', async () => {
    const before = await jobCount();
    const res = await upload({ content: Buffer.from([0x89, 0x50, 0x4e, 0x47]), type: 'image/png', name: 'x.png' });
    expect(res.status).toBe(415);
    expect(res.body.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    expect(await jobCount()).toBe(before);
  });

  it('rejects a JSON body on the upload route with 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    const res = await t.request('POST', '/v1/screenshot/upload', { key, body: { html: '<h1>x</h1>' } });
    expect(res.status).toBe(415);
    expect(res.body.code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('counts against the quota: the upload that would exceed the cap is 429 PLAN_QUOTA_EXCEEDED', async () => {
    const free = await t.createKey('free');
    const ds = t.get(DataSource);
    const res1 = await upload({ content: page('white') }, {}, { authorization: `Bearer ${free.key}` });
    expect(res1.status).toBe(202);
    const [{ used }] = await ds.query('SELECT used FROM quota_usage WHERE api_key_id = $1', [free.keyId]);
    expect(used).toBe(1);
    await ds.query('UPDATE quota_usage SET used = 100 WHERE api_key_id = $1', [free.keyId]);
    const res2 = await upload({ content: page('white') }, {}, { authorization: `Bearer ${free.key}` });
    expect(res2.status).toBe(429);
    expect(res2.body.code).toBe('PLAN_QUOTA_EXCEEDED');
    await waitForJob(t, free.key, res1.body.id);
  });

  it('replays a retry with the same Idempotency-Key and file, and refuses the key with another file (422)', async () => {
    const headers = { authorization: `Bearer ${key}`, 'idempotency-key': `upload-${Date.now()}` };
    const before = await jobCount();
    const first = await upload({ content: page('white') }, { width: '600' }, headers);
    expect(first.status).toBe(202);
    const again = await upload({ content: page('white') }, { width: '600' }, headers);
    expect(again.status).toBe(202);
    expect(again.body.id).toBe(first.body.id);
    expect(await jobCount()).toBe(before + 1);
    const otherFile = await upload({ content: page('black') }, { width: '600' }, headers);
    expect(otherFile.status).toBe(422);
    expect(otherFile.body.code).toBe('IDEMPOTENCY_KEY_REUSED');
    const otherOptions = await upload({ content: page('white') }, { width: '700' }, headers);
    expect(otherOptions.status).toBe(422);
    await waitForJob(t, key, first.body.id);
  });

  it('requires an API key', async () => {
    const res = await upload({ content: page('white') }, {}, {});
    expect(res.status).toBe(401);
  });
});
