import { DataSource } from 'typeorm';
import { AccountsService } from '../../src/accounts/accounts.service';
import { ApiKeysService } from '../../src/auth/api-keys.service';
import { SsrfGuard } from '../../src/egress/ssrf-guard';
import { Clock } from '../../src/common/clock';
import { RetentionProcessor } from '../../src/retention/retention.processor';
import { FakeClock } from '../support/fake-clock';
import { startTestApp, TestApp } from '../support/test-app';

/** A raw POST /v1/screenshot: the body as sent, byte for byte. */
interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

describe('Idempotency-Key on POST /v1/screenshot', () => {
  const clock = new FakeClock('2026-06-10T12:00:00.000Z');
  let t: TestApp;
  let db: DataSource;
  let seq = 0;

  beforeAll(async () => {
    t = await startTestApp({ runProcessors: false, override: (b) => b.overrideProvider(Clock).useValue(clock) });
    db = t.get(DataSource);
  });

  afterAll(async () => {
    await t.close();
  });

  /** A fresh, valid Idempotency-Key. */
  const newKey = () => `retry-${Date.now().toString(36)}-${++seq}`;
  const page = (n = 1) => ({ url: `http://127.0.0.1:9/page-${n}` });

  async function post(apiKey: string, body: unknown, idempotencyKey?: string): Promise<RawResponse> {
    const res = await fetch(`${t.baseUrl}/v1/screenshot`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${apiKey}`,
        'content-type': 'application/json',
        ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }),
      },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, json: JSON.parse(text) };
  }

  async function counts(keyId: string): Promise<{ jobs: number; used: number }> {
    const [{ jobs }] = await db.query(`SELECT COUNT(*)::int AS jobs FROM screenshot_jobs WHERE api_key_id = $1`, [keyId]);
    const usage = await db.query(`SELECT used FROM quota_usage WHERE api_key_id = $1`, [keyId]);
    return { jobs, used: usage[0]?.used ?? 0 };
  }

  /**
   * Holds the next request for `url` inside the handler (in the SSRF check, after the key was
   * claimed) until `release()`; `entered` resolves once it is held. Other requests pass.
   */
  function holdNext(url: string) {
    const guard = t.get(SsrfGuard);
    const original = guard.assertAllowed.bind(guard);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let markEntered!: () => void;
    const entered = new Promise<void>((resolve) => (markEntered = resolve));
    let held = false;
    const spy = jest.spyOn(guard, 'assertAllowed').mockImplementation(async (target: string) => {
      if (target === url && !held) {
        held = true;
        markEntered();
        await released;
      }
      return original(target);
    });
    return {
      entered,
      release: () => {
        release();
        spy.mockRestore();
      },
    };
  }

  it('replays the first 2xx byte for byte with Idempotency-Replayed: true, without a new job or quota use', async () => {
    const { key, keyId } = await t.createKey('free');
    const idem = newKey();
    const first = await post(key, page(), idem);
    expect(first.status).toBe(202);
    expect(first.headers.get('idempotency-replayed')).toBeNull();

    clock.advance(60 * 60 * 1000);
    const replay = await post(key, page(), idem);
    expect(replay.status).toBe(202);
    expect(replay.text).toBe(first.text);
    expect(replay.json.id).toBe(first.json.id);
    expect(replay.headers.get('content-type')).toBe(first.headers.get('content-type'));
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.headers.get('x-ratelimit-remaining')).toBe('99');
    expect(await counts(keyId)).toEqual({ jobs: 1, used: 1 });

    // Same body in another key order is the same request.
    const reordered = await fetch(`${t.baseUrl}/v1/screenshot`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': idem },
      body: `{ "url" : "${page().url}" }`,
    });
    expect(await reordered.text()).toBe(first.text);
  });

  it('answers 422 IDEMPOTENCY_KEY_REUSED for the same key with another body', async () => {
    const { key, keyId } = await t.createKey('free');
    const idem = newKey();
    expect((await post(key, page(1), idem)).status).toBe(202);
    const reused = await post(key, { ...page(1), width: 800 }, idem);
    expect(reused.status).toBe(422);
    expect(reused.json).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED' });
    expect(reused.headers.get('x-ratelimit-limit')).toBe('100');
    expect(await counts(keyId)).toEqual({ jobs: 1, used: 1 });
  });

  it('answers 400 INVALID_IDEMPOTENCY_KEY outside [A-Za-z0-9_-]{8,128}, and accepts both ends of the range', async () => {
    const { key, keyId } = await t.createKey('free');
    for (const bad of ['', '1234567', 'has space', 'dots.are.out', 'percent%2Fkey', 'x'.repeat(129)]) {
      const res = await post(key, page(), bad);
      expect(res.status).toBe(400);
      expect(res.json.code).toBe('INVALID_IDEMPOTENCY_KEY');
    }
    expect((await post(key, page(1), 'A1_b2-C3')).status).toBe(202);
    expect((await post(key, page(2), 'k'.repeat(128))).status).toBe(202);
    expect(await counts(keyId)).toEqual({ jobs: 2, used: 2 });
  });

  it('scopes keys per API key: another key with the same Idempotency-Key gets its own job', async () => {
    const first = await t.createKey('free');
    const second = await t.get(ApiKeysService).create(first.accountId, 'second');
    const idem = newKey();
    const a = await post(first.key, page(), idem);
    const b = await post(second.key, page(), idem);
    expect([a.status, b.status]).toEqual([202, 202]);
    expect(b.json.id).not.toBe(a.json.id);
    expect(b.headers.get('idempotency-replayed')).toBeNull();
    // …and another body under the other key is no reuse either.
    expect((await post(second.key, page(2), newKey())).status).toBe(202);
  });

  it('releases the key on a non-2xx answer, so the retry runs again', async () => {
    const { key, keyId, accountId } = await t.createKey('free');
    const idem = newKey();
    // A validation failure releases it: a corrected body under the same key is no reuse.
    expect((await post(key, { url: 'ftp://example.com' }, idem)).status).toBe(400);
    expect((await post(key, page(), idem)).status).toBe(202);

    // A 429 releases it: after an upgrade the same retry is accepted, not replayed as 429.
    await db.query(`UPDATE quota_usage SET used = 100 WHERE api_key_id = $1`, [keyId]);
    const idem2 = newKey();
    const refused = await post(key, page(2), idem2);
    expect(refused.status).toBe(429);
    await t.get(AccountsService).changePlan(accountId, 'starter');
    const retried = await post(key, page(2), idem2);
    expect(retried.status).toBe(202);
    expect(retried.headers.get('idempotency-replayed')).toBeNull();
    expect((await counts(keyId)).jobs).toBe(2);
  });

  it('answers 409 IDEMPOTENCY_IN_FLIGHT while the first request runs, then replays its answer', async () => {
    const { key, keyId } = await t.createKey('free');
    const idem = newKey();
    const body = { url: 'http://127.0.0.1:9/held-409' };
    const hold = holdNext(body.url);
    const first = post(key, body, idem);
    await hold.entered;

    const concurrent = await post(key, body, idem);
    expect(concurrent.status).toBe(409);
    expect(concurrent.json).toMatchObject({ code: 'IDEMPOTENCY_IN_FLIGHT' });
    expect(concurrent.headers.get('x-ratelimit-remaining')).toBe('100');
    // A different body under the running key is a reuse, not a wait.
    expect((await post(key, page(), idem)).status).toBe(422);

    hold.release();
    const done = await first;
    expect(done.status).toBe(202);
    const replay = await post(key, body, idem);
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.json.id).toBe(done.json.id);
    expect(await counts(keyId)).toEqual({ jobs: 1, used: 1 });
  });

  it('creates one job for 20 concurrent retries of one key: the others get 409 or the replay', async () => {
    const { key, keyId } = await t.createKey('free');
    const idem = newKey();
    const responses = await Promise.all(Array.from({ length: 20 }, () => post(key, page(), idem)));
    const accepted = responses.filter((r) => r.status === 202);
    expect(responses.every((r) => r.status === 202 || r.status === 409)).toBe(true);
    expect(accepted.filter((r) => r.headers.get('idempotency-replayed') === null)).toHaveLength(1);
    expect(new Set(accepted.map((r) => r.json.id)).size).toBe(1);
    expect(await counts(keyId)).toEqual({ jobs: 1, used: 1 });
  });

  it('frees a key whose request outlives the 60 s lease (a crashed request); the late request commits nothing', async () => {
    const { key, keyId } = await t.createKey('free');
    const idem = newKey();
    const body = { url: 'http://127.0.0.1:9/held-lease' };
    const hold = holdNext(body.url);
    const stuck = post(key, body, idem);
    await hold.entered;

    clock.advance(59_999);
    expect((await post(key, body, idem)).status).toBe(409);
    clock.advance(1);
    const takeover = await post(key, body, idem);
    expect(takeover.status).toBe(202);
    expect(takeover.headers.get('idempotency-replayed')).toBeNull();

    // The stuck request ends late: it lost the key, so its acceptance rolls back (no second job, no
    // second count) and it answers 409; the new owner's answer stays the stored one.
    hold.release();
    const late = await stuck;
    expect(late.status).toBe(409);
    expect(late.json.code).toBe('IDEMPOTENCY_IN_FLIGHT');
    const replay = await post(key, body, idem);
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.json.id).toBe(takeover.json.id);
    expect(await counts(keyId)).toEqual({ jobs: 1, used: 1 });
  });

  it('keeps a response for 24 hours, then forgets it; the retention job deletes expired entries', async () => {
    const { key, keyId } = await t.createKey('free');
    const idem = newKey();
    const first = await post(key, page(), idem);
    clock.advance(24 * 60 * 60 * 1000 - 1);
    expect((await post(key, page(), idem)).json.id).toBe(first.json.id);
    const stored = () => db.query(`SELECT 1 FROM idempotency_keys WHERE api_key_id = $1 AND "key" = $2`, [keyId, idem]);

    await t.get(RetentionProcessor).run();
    expect(await stored()).toHaveLength(1);
    clock.advance(1);
    expect((await t.get(RetentionProcessor).run()).idempotencyRecords).toBeGreaterThanOrEqual(1);
    expect(await stored()).toHaveLength(0);

    const again = await post(key, page(), idem);
    expect(again.status).toBe(202);
    expect(again.json.id).not.toBe(first.json.id);
    expect(again.headers.get('idempotency-replayed')).toBeNull();
    expect(await counts(keyId)).toEqual({ jobs: 2, used: 2 });
  });

  it('leaves requests without the header alone: each one is a new job', async () => {
    const { key, keyId } = await t.createKey('free');
    const a = await post(key, page());
    const b = await post(key, page());
    expect(b.json.id).not.toBe(a.json.id);
    expect(await counts(keyId)).toEqual({ jobs: 2, used: 2 });
  });
});

describe('Idempotency-Key on the other write routes (rotate, test, resend, cancel)', () => {
  let t: TestApp;
  let key: string;

  beforeAll(async () => {
    t = await startTestApp({ runProcessors: false, env: { WEBHOOK_ALLOW_HTTP: 'true' } });
    ({ key } = await t.createKey());
  });
  afterAll(() => t.close());

  const post = (path: string, idempotencyKey?: string, body: unknown = {}) =>
    t.request('POST', path, { key, body, headers: idempotencyKey ? { 'Idempotency-Key': idempotencyKey } : {} });

  it('a retried rotation gets the same new secret back instead of rotating again', async () => {
    const endpoint = await t.request('POST', '/v1/webhooks', { key, body: { url: 'http://127.0.0.1:9/hook' } });
    expect(endpoint.status).toBe(201);
    const first = await post(`/v1/webhooks/${endpoint.body.id}/rotate`, 'rotate-once-1');
    const retry = await post(`/v1/webhooks/${endpoint.body.id}/rotate`, 'rotate-once-1');
    expect(first.status).toBe(200);
    expect(first.headers.get('idempotency-replayed')).toBeNull();
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotency-replayed')).toBe('true');
    expect(retry.body.secret).toBe(first.body.secret);
    expect(first.body.secret).not.toBe(endpoint.body.secret);
    const another = await post(`/v1/webhooks/${endpoint.body.id}/rotate`, 'rotate-once-2');
    expect(another.body.secret).not.toBe(first.body.secret);

    const ping = await post(`/v1/webhooks/${endpoint.body.id}/test`, 'ping-once-1');
    const pingRetry = await post(`/v1/webhooks/${endpoint.body.id}/test`, 'ping-once-1');
    expect(pingRetry.body.deliveryId).toBe(ping.body.deliveryId);
    const deliveries = await t.request('GET', `/v1/webhooks/${endpoint.body.id}/deliveries`, { key });
    expect(deliveries.body.data.filter((d: { type: string }) => d.type === 'test.ping')).toHaveLength(1);
  });

  it('a retried cancel gets the first answer back, not 409 RUN_ALREADY_ENDED', async () => {
    const run = await t.request('POST', '/v1/runs', { key, body: { url: 'http://127.0.0.1:9/', video: false } });
    expect(run.status).toBe(202);
    const first = await post(`/v1/runs/${run.body.id}/cancel`, 'cancel-once-1');
    const retry = await post(`/v1/runs/${run.body.id}/cancel`, 'cancel-once-1');
    expect(first.status).toBe(202);
    expect(first.body.status).toBe('failed');
    expect(retry.status).toBe(202);
    expect(retry.headers.get('idempotency-replayed')).toBe('true');
    expect(retry.body).toEqual(first.body);
    const without = await post(`/v1/runs/${run.body.id}/cancel`);
    expect(without.status).toBe(409);
    expect(without.body.code).toBe('RUN_ALREADY_ENDED');
  });
});
