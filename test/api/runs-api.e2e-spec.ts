import { getQueueToken } from '@nestjs/bull';
import { DataSource } from 'typeorm';
import { RUN_QUEUE } from '../../src/queue/queues';
import { Clock } from '../../src/common/clock';
import { RunProcessor } from '../../src/runs/run.processor';
import { ResultFilesService } from '../../src/storage/result-files.service';
import { ResultStorage } from '../../src/storage/result-storage';
import { FakeClock } from '../support/fake-clock';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * The runs API without a worker (processors off): validation, ownership, quota, idempotent replay,
 * listing and cancel of a pending run. Sessions themselves are covered by runs.e2e-spec.ts.
 */
describe('browser session runs: API', () => {
  let t: TestApp;
  let db: DataSource;
  let key: string;
  const url = 'http://127.0.0.1:9/start';
  const clock = new FakeClock('2026-11-20T12:00:00.000Z');

  beforeAll(async () => {
    t = await startTestApp({ runProcessors: false, override: (b) => b.overrideProvider(Clock).useValue(clock) });
    db = t.get(DataSource);
    ({ key } = await t.createKey());
  });

  afterAll(async () => {
    await t.close();
  });

  async function fieldsOf(body: unknown) {
    const res = await t.request('POST', '/v1/runs', { key, body });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_FAILED');
    return (res.body.details.fields as { field: string; message: string }[]).map((f) => f.field);
  }

  it('accepts a run: 202 with the run object, pending', async () => {
    const res = await t.request('POST', '/v1/runs', { key, body: { url, steps: [{ action: 'click', selector: '#go' }] } });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^run_[0-9A-Za-z]{24}$/),
      status: 'pending',
      url,
      finalUrl: null,
      pageTitle: null,
      videoUrl: null,
      consoleErrorCount: 0,
      networkErrorCount: 0,
      consoleErrors: [],
      networkErrors: [],
      steps: [],
      finalizationError: null,
      failure: null,
      savedProfileId: null,
      createdAt: expect.any(String),
      startedAt: null,
      completedAt: null,
    });
    const got = await t.request('GET', `/v1/runs/${res.body.id}`, { key });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
  });

  it.each([
    ['an unknown action', { url, steps: [{ action: 'fly', selector: '#x' }] }, ['steps[0].action']],
    ['a step without action', { url, steps: [{ selector: '#x' }] }, ['steps[0].action']],
    ['a click without selector', { url, steps: [{ action: 'wait', ms: 5 }, { action: 'click' }] }, ['steps[1].selector']],
    ['a fill without value', { url, steps: [{ action: 'fill', selector: '#a' }] }, ['steps[0].value']],
    ['a field another action has', { url, steps: [{ action: 'click', selector: '#a', value: 'x' }] }, ['steps[0].value']],
    ['51 steps', { url, steps: Array.from({ length: 51 }, () => ({ action: 'wait', ms: 1 })) }, ['steps']],
    ['a run timeoutMs below 1000', { url, timeoutMs: 999 }, ['timeoutMs']],
    ['a run timeoutMs above 300000', { url, timeoutMs: 300_001 }, ['timeoutMs']],
    ['a step timeoutMs out of range', { url, steps: [{ action: 'click', selector: '#a', timeoutMs: 0 }] }, ['steps[0].timeoutMs']],
    ['a wait above 10 s', { url, steps: [{ action: 'wait', ms: 10_001 }] }, ['steps[0].ms']],
    ['scroll with both selector and y', { url, steps: [{ action: 'scroll', selector: '#a', y: 10 }] }, ['steps[0].selector']],
    ['scroll with neither', { url, steps: [{ action: 'scroll' }] }, ['steps[0].selector']],
    ['a goto to a file URL', { url, steps: [{ action: 'goto', url: 'file:///etc/passwd' }] }, ['steps[0].url']],
    ['a bad screenshot format', { url, steps: [{ action: 'screenshot', format: 'gif' }] }, ['steps[0].format']],
    ['steps that is not an array', { url, steps: { action: 'click' } }, ['steps']],
    ['a missing url', { steps: [] }, ['url']],
    ['an unknown top-level field', { url, vidoe: false }, ['vidoe']],
    ['an unknown time zone', { url, timezone: 'Mars/Olympus' }, ['timezone']],
    ['a malformed locale', { url, locale: 'not a locale' }, ['locale']],
    ['a scale above 3', { url, scale: 4 }, ['scale']],
  ])('400 naming the field for %s', async (_name, body, fields) => {
    expect(await fieldsOf(body)).toEqual(fields);
  });

  it('refuses a blocked first URL with TARGET_NOT_ALLOWED when the guard is on (and counts nothing)', async () => {
    const guarded = await startTestApp({ runProcessors: false, env: { SSRF_ALLOW_PRIVATE: 'false' } });
    try {
      const { key: k, keyId } = await guarded.createKey();
      const res = await guarded.request('POST', '/v1/runs', { key: k, body: { url: 'http://127.0.0.1:9/' } });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('TARGET_NOT_ALLOWED');
      const rows = await guarded
        .get(DataSource)
        .query('SELECT COALESCE(SUM(used), 0)::int AS used FROM quota_usage WHERE api_key_id = $1', [keyId]);
      expect(rows[0].used).toBe(0);
    } finally {
      await guarded.close();
    }
  });

  it('refuses evaluate steps when RUNS_ALLOW_EVALUATE=false', async () => {
    const strict = await startTestApp({ runProcessors: false, env: { RUNS_ALLOW_EVALUATE: 'false' } });
    try {
      const { key: k } = await strict.createKey();
      const res = await strict.request('POST', '/v1/runs', {
        key: k,
        body: {
          url,
          steps: [
            { action: 'wait', ms: 1 },
            { action: 'evaluate', script: '1' },
          ],
        },
      });
      expect(res.status).toBe(400);
      expect(res.body.details.fields).toEqual([{ field: 'steps[1].action', message: 'evaluate steps are disabled on this server' }]);
    } finally {
      await strict.close();
    }
  });

  it("answers 404 for another account's run, an unknown id and a malformed id", async () => {
    const mine = await t.request('POST', '/v1/runs', { key, body: { url } });
    const other = await t.createKey();
    for (const path of [`/v1/runs/${mine.body.id}`, `/v1/runs/${mine.body.id}/cancel`]) {
      const res = await t.request(path.endsWith('cancel') ? 'POST' : 'GET', path, { key: other.key });
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('NOT_FOUND');
    }
    expect((await t.request('GET', '/v1/runs/run_000000000000000000000000', { key })).status).toBe(404);
    expect((await t.request('GET', '/v1/runs/nope', { key })).status).toBe(404);
    const list = await t.request('GET', '/v1/runs', { key: other.key });
    expect(list.body).toEqual({ data: [], nextCursor: null });
  });

  it('counts one screenshot per run, whatever its screenshot steps; 429 at the cap with nothing created', async () => {
    const { key: k, keyId } = await t.createKey('free');
    const steps = [{ action: 'screenshot' }, { action: 'screenshot', fullPage: true }, { action: 'screenshot', format: 'jpeg' }];
    expect((await t.request('POST', '/v1/runs', { key: k, body: { url, steps } })).status).toBe(202);
    const used = async () => (await db.query('SELECT used FROM quota_usage WHERE api_key_id = $1', [keyId]))[0].used;
    expect(await used()).toBe(1);
    await db.query('UPDATE quota_usage SET used = 100 WHERE api_key_id = $1', [keyId]);
    const over = await t.request('POST', '/v1/runs', { key: k, body: { url } });
    expect(over.status).toBe(429);
    expect(over.body.code).toBe('PLAN_QUOTA_EXCEEDED');
    const [{ count }] = await db.query('SELECT COUNT(*)::int AS count FROM runs WHERE api_key_id = $1', [keyId]);
    expect(count).toBe(1);
  });

  it('replays the same run for the same Idempotency-Key without counting again; another body is 422', async () => {
    const { key: k, keyId } = await t.createKey();
    const body = { url, steps: [{ action: 'fill', selector: '#pw', value: 'replay-secret-42', sensitive: true }] };
    const headers = { 'idempotency-key': 'run-replay-0001' };
    const first = await t.request('POST', '/v1/runs', { key: k, body, headers });
    const again = await t.request('POST', '/v1/runs', { key: k, body, headers });
    expect(first.status).toBe(202);
    expect(again.status).toBe(202);
    expect(again.headers.get('idempotency-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect((await db.query('SELECT used FROM quota_usage WHERE api_key_id = $1', [keyId]))[0].used).toBe(1);
    const other = await t.request('POST', '/v1/runs', { key: k, body: { url: `${url}/other` }, headers });
    expect(other.status).toBe(422);
    // The sensitive value is nowhere in PostgreSQL: not in the run, not in the stored replay.
    const dump = JSON.stringify([
      await db.query('SELECT * FROM runs WHERE api_key_id = $1', [keyId]),
      await db.query('SELECT * FROM idempotency_keys'),
    ]);
    expect(dump).toContain('#pw');
    expect(dump).not.toContain('replay-secret-42');
  });

  it('lists newest first with a cursor, and filters by status', async () => {
    const { key: k } = await t.createKey();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      clock.advance(1);
      ids.push((await t.request('POST', '/v1/runs', { key: k, body: { url: `${url}/${i}` } })).body.id);
    }
    const first = await t.request('GET', '/v1/runs?limit=2', { key: k });
    expect(first.status).toBe(200);
    expect(first.body.data.map((r: any) => r.id)).toEqual([ids[4], ids[3]]);
    const second = await t.request('GET', `/v1/runs?limit=2&cursor=${first.body.nextCursor}`, { key: k });
    expect(second.body.data.map((r: any) => r.id)).toEqual([ids[2], ids[1]]);
    const third = await t.request('GET', `/v1/runs?limit=2&cursor=${second.body.nextCursor}`, { key: k });
    expect(third.body).toEqual({ data: [expect.objectContaining({ id: ids[0] })], nextCursor: null });
    expect((await t.request('GET', '/v1/runs?status=completed', { key: k })).body.data).toEqual([]);
    expect((await t.request('GET', '/v1/runs?status=pending', { key: k })).body.data).toHaveLength(5);
    for (const query of ['limit=0', 'limit=101', 'status=done', 'cursor=bm9wZQ']) {
      const bad = await t.request('GET', `/v1/runs?${query}`, { key: k });
      expect(bad.status).toBe(400);
      expect(bad.body.code).toBe('VALIDATION_FAILED');
    }
  });

  it('cancels a pending run at once (failed, stage canceled, steps skipped); a second cancel is 409', async () => {
    const created = await t.request('POST', '/v1/runs', { key, body: { url, steps: [{ action: 'wait', ms: 1 }] } });
    const canceled = await t.request('POST', `/v1/runs/${created.body.id}/cancel`, { key });
    expect(canceled.status).toBe(202);
    expect(canceled.body).toMatchObject({
      status: 'failed',
      finalizationError: 'the run was canceled',
      failure: { stage: 'canceled', stepIndex: null },
      steps: [{ index: 0, action: 'wait', status: 'skipped', durationMs: 0, error: null, screenshotUrl: null, result: null }],
    });
    const again = await t.request('POST', `/v1/runs/${created.body.id}/cancel`, { key });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('RUN_ALREADY_ENDED');
  });

  it('ends a run redelivered after its worker died mid-run as failed (stage worker), never running it twice', async () => {
    const created = await t.request('POST', '/v1/runs', {
      key,
      body: {
        url,
        steps: [
          { action: 'wait', ms: 1 },
          { action: 'wait', ms: 1 },
        ],
      },
    });
    // A worker claimed the run, finished step 0 and died; the queue redelivers the run.
    await db.query(`UPDATE runs SET status = 'running', started_at = $2, attempts = 1, step_results = $3 WHERE id = $1`, [
      created.body.id,
      clock.now(),
      JSON.stringify([{ index: 0, action: 'wait', status: 'ok', durationMs: 1, error: null, screenshotFile: null, result: null }]),
    ]);
    await t.get(RunProcessor).process({ runId: created.body.id });
    const run = (await t.request('GET', `/v1/runs/${created.body.id}`, { key })).body;
    expect(run).toMatchObject({
      status: 'failed',
      finalizationError: 'the worker stopped during the run',
      failure: { stage: 'worker', stepIndex: 1 },
    });
    expect(run.steps.map((s: any) => s.status)).toEqual(['ok', 'skipped']);
  });

  it('reconciler: fails a run running far beyond its budget, and re-queues a pending run whose queue entry was lost', async () => {
    const stuck = await t.request('POST', '/v1/runs', { key, body: { url, timeoutMs: 1000 } });
    await db.query(`UPDATE runs SET status = 'running', started_at = $2, attempts = 1 WHERE id = $1`, [stuck.body.id, clock.now()]);
    const lost = await t.request('POST', '/v1/runs', { key, body: { url } });
    const queue = t.get<any>(getQueueToken(RUN_QUEUE));
    await (await queue.getJob(lost.body.id)).remove();
    clock.advance(10 * 60_000);
    const result = await t.get(RunProcessor).sweep();
    expect(result.stranded).toBeGreaterThanOrEqual(1);
    expect((await t.request('GET', `/v1/runs/${stuck.body.id}`, { key })).body).toMatchObject({
      status: 'failed',
      failure: { stage: 'worker' },
    });
    expect(await queue.getJob(lost.body.id)).not.toBeNull();
  });

  it('reconciler: deletes the video and step screenshots of runs past RESULT_TTL_DAYS', async () => {
    const files = t.get(ResultFilesService);
    const storage = t.get<ResultStorage>(ResultStorage as unknown as string);
    const video = await files.save(Buffer.from('webm'), 'webm');
    const shot = await files.save(Buffer.from('png'), 'png');
    const created = await t.request('POST', '/v1/runs', { key, body: { url, steps: [{ action: 'screenshot' }] } });
    await db.query(
      `UPDATE runs SET status = 'completed', started_at = $2, completed_at = $2, video_file = $3, step_results = $4 WHERE id = $1`,
      [
        created.body.id,
        clock.now(),
        video,
        JSON.stringify([{ index: 0, action: 'screenshot', status: 'ok', durationMs: 5, error: null, screenshotFile: shot, result: null }]),
      ],
    );
    expect(await storage.stat(video)).not.toBeNull();
    clock.advance(31 * 24 * 3600_000);
    const result = await t.get(RunProcessor).sweep();
    expect(result.filesDeleted).toBeGreaterThanOrEqual(2);
    expect(await storage.stat(video)).toBeNull();
    expect(await storage.stat(shot)).toBeNull();
    expect((await db.query('SELECT results_deleted_at FROM runs WHERE id = $1', [created.body.id]))[0].results_deleted_at).not.toBeNull();
  });
});
