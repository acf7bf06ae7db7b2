import { DataSource } from 'typeorm';
import { preferredWaitSeconds } from '../../src/idempotency/prefer-wait';
import { waitFor } from '../support/outage';
import { startPageServer, PageServer } from '../support/page-server';
import { startTestApp, TestApp, waitForJob } from '../support/test-app';

/** `Prefer: wait=N` on the work-creating routes (CONTRACT.md, "Synchronous answers"). */
describe('Prefer: wait=N', () => {
  let t: TestApp;
  let pages: PageServer;
  let key: string;
  let accountId: string;
  const held: (() => void)[] = [];

  beforeAll(async () => {
    pages = await startPageServer({
      '/': '<!doctype html><html><body style="background:rgb(0,128,0)"><h1>ready</h1></body></html>',
      // Answers only when the test lets it: a capture that cannot end within the preferred wait.
      '/held': (_req, res) => held.push(() => res.writeHead(200, { 'content-type': 'text/html' }).end('<h1>late</h1>')),
    });
    t = await startTestApp();
    ({ key, accountId } = await t.createKey());
    // The process opens its listening connection at boot (`WorkEndWaiter.openAhead`), before any
    // wait: this fails without it. Waited for, as on a 2-core machine busy with the suite the connect
    // took longer than DEPENDENCY_TIMEOUT_MS once, and a wait without the connection answers 202 at once.
    await waitFor('the ended-work listener, opened at boot', async () => (await listeners()) === 1, 30_000);
  });

  afterAll(async () => {
    for (const release of held) release();
    await t.close();
    await pages.close();
  });

  /** How many connections of this database listen for ended work (`WorkEndWaiter`). */
  async function listeners(): Promise<number> {
    const rows = await t
      .get(DataSource)
      .query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE query = 'LISTEN glimpse_work_ended' AND datname = current_database()`);
    return rows[0].n;
  }

  async function used(): Promise<number> {
    const rows = await t
      .get(DataSource)
      .query(
        'SELECT coalesce(sum(used), 0)::int AS used FROM quota_usage q JOIN api_keys k ON k.id = q.api_key_id WHERE k.account_id = $1',
        [accountId],
      );
    return rows[0].used;
  }

  it('answers 200 with the ended job and Preference-Applied when the capture ends in time', async () => {
    const before = await used();
    const res = await t.request('POST', '/v1/screenshot', { key, body: { url: `${pages.url}/` }, headers: { prefer: 'wait=30' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('preference-applied')).toBe('wait=30');
    expect(res.body).toMatchObject({ status: 'done', error: null, url: expect.stringMatching(/^http/) });
    expect(res.body.completedAt).not.toBeNull();
    expect(await used()).toBe(before + 1);
    const got = await t.request('GET', `/v1/screenshot/${res.body.id}`, { key });
    expect(got.body).toEqual(res.body);
  });

  it('waits on one shared LISTEN connection of the process, not a poll per request', async () => {
    expect(await listeners()).toBe(1);
  });

  it('answers the usual 202 when the job has not ended within N seconds, and the job goes on', async () => {
    const res = await t.request('POST', '/v1/screenshot', { key, body: { url: `${pages.url}/held` }, headers: { prefer: 'wait=1' } });
    expect(res.status).toBe(202);
    expect(res.headers.get('preference-applied')).toBeNull();
    expect(res.body.status).toMatch(/^(pending|processing)$/);
    for (const release of held.splice(0)) release();
    expect((await waitForJob(t, key, res.body.id)).status).toBe('done');
  });

  it('ignores other Prefer values and waits out of 1–60', async () => {
    for (const prefer of ['respond-async', 'wait=0', 'wait=61', 'wait=abc']) {
      const res = await t.request('POST', '/v1/screenshot', { key, body: { url: `${pages.url}/` }, headers: { prefer } });
      expect(res.status).toBe(202);
      expect(res.body.status).toBe('pending');
    }
  });

  it('replays what the first request answered, counted once', async () => {
    const headers = { prefer: 'wait=30', 'idempotency-key': `prefer-${Date.now()}` };
    const first = await t.request('POST', '/v1/screenshot', { key, body: { url: `${pages.url}/`, width: 640 }, headers });
    expect(first.status).toBe(200);
    const afterFirst = await used();
    const replay = await t.request('POST', '/v1/screenshot', { key, body: { url: `${pages.url}/`, width: 640 }, headers });
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
    expect(await used()).toBe(afterFirst);
  });

  it('answers 200 with the failed job when the capture fails in time', async () => {
    // Nothing listens on port 9 of loopback: the navigation fails at once.
    const res = await t.request('POST', '/v1/screenshot', { key, body: { url: 'http://127.0.0.1:9/' }, headers: { prefer: 'wait=30' } });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('failed');
    expect(res.body.error).toEqual(expect.any(String));
  });

  it('works on POST /v1/screenshot/upload', async () => {
    const form = new FormData();
    form.append('file', new Blob(['<!doctype html><h1>uploaded</h1>'], { type: 'text/html' }), 'page.html');
    form.append('width', '400');
    const res = await fetch(`${t.baseUrl}/v1/screenshot/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, prefer: 'wait=30' },
      body: form,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('preference-applied')).toBe('wait=30');
    expect(await res.json()).toMatchObject({ status: 'done', width: 400 });
  });

  it('works on POST /v1/runs: 200 with the completed run', async () => {
    const res = await t.request('POST', '/v1/runs', {
      key,
      body: { url: `${pages.url}/`, steps: [{ action: 'waitForSelector', selector: 'h1' }] },
      headers: { prefer: 'respond-async, wait=60' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('preference-applied')).toBe('wait=60');
    expect(res.body.status).toBe('completed');
  });
});

describe('preferredWaitSeconds', () => {
  it.each([
    ['wait=5', 5],
    ['WAIT = 10', 10],
    ['respond-async, wait=60', 60],
    [['handling=lenient', 'wait="3"'], 3],
    ['wait=0', null],
    ['wait=61', null],
    ['wait=1.5', null],
    ['return=minimal', null],
    [undefined, null],
  ])('%j → %j', (header, seconds) => {
    expect(preferredWaitSeconds(header as string | string[] | undefined)).toBe(seconds);
  });
});
