import { Glimpse } from './client';
import { GlimpseConnectionError, GlimpseError } from './errors';
import type { GlimpseApiErrorCode } from './errors';
import { backoffMs, newIdempotencyKey, retryAfterMs } from './http';

/** A fetch that answers from a script, one entry per attempt, and records what it was sent. */
function scriptedFetch(...script: (((req: Request) => Response) | Error)[]) {
  const requests: Request[] = [];
  const bodies: string[] = [];
  const fetch = async (req: Request) => {
    requests.push(req);
    bodies.push(await req.clone().text());
    const step = script[Math.min(requests.length - 1, script.length - 1)];
    if (step instanceof Error) throw step;
    return step(req);
  };
  return { fetch, requests, bodies };
}

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}) =>
  () =>
    new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', 'x-request-id': 'req_test', ...headers } });
const job = { id: 'scr_1', status: 'pending', url: null, error: null, createdAt: '2026-11-20T12:00:00.000Z' };
const envelope = (code: string) => ({ error: code.toLowerCase(), code, requestId: 'req_test' });

function client(
  fetch: (req: Request) => Promise<Response>,
  options: { maxRetries?: number; maxRetryAfterMs?: number; timeoutMs?: number } = {},
) {
  return new Glimpse({ apiKey: 'sk_live_test', baseUrl: 'http://api.test/', fetch, ...options });
}

describe('retries and idempotency', () => {
  beforeEach(() => jest.spyOn(Math, 'random').mockReturnValue(0)); // back-off pauses of 0 ms
  afterEach(() => jest.restoreAllMocks());

  it('sends one Idempotency-Key per POST call, the same on each retry of it, and a new one for the next call', async () => {
    const s = scriptedFetch(
      json(503, envelope('SERVICE_UNAVAILABLE'), { 'retry-after': '0' }),
      new TypeError('fetch failed'),
      json(202, job),
    );
    const glimpse = client(s.fetch);
    await expect(glimpse.screenshots.create({ url: 'https://example.com' })).resolves.toMatchObject({ id: 'scr_1' });
    expect(s.requests).toHaveLength(3);
    const keys = s.requests.map((r) => r.headers.get('idempotency-key'));
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(keys)).toEqual(new Set([keys[0]]));
    expect(s.bodies).toEqual(Array(3).fill('{"url":"https://example.com"}'));
    expect(s.requests[0].headers.get('authorization')).toBe('Bearer sk_live_test');
    expect(s.requests[0].url).toBe('http://api.test/v1/screenshot');

    await glimpse.screenshots.create({ url: 'https://example.com' });
    expect(s.requests[3].headers.get('idempotency-key')).not.toBe(keys[0]);
  });

  it('uses the caller’s own Idempotency-Key, and sends none on GET', async () => {
    const s = scriptedFetch(json(202, job), json(200, job));
    const glimpse = client(s.fetch);
    await glimpse.screenshots.create({ url: 'https://example.com' }, { idempotencyKey: 'order-42' });
    await glimpse.screenshots.get('scr_1');
    expect(s.requests.map((r) => r.headers.get('idempotency-key'))).toEqual(['order-42', null]);
  });

  it('waits for Retry-After on 429 RATE_LIMITED and TOO_MANY_PENDING_JOBS', async () => {
    const s = scriptedFetch(
      json(429, envelope('RATE_LIMITED'), { 'retry-after': '1' }),
      json(429, envelope('TOO_MANY_PENDING_JOBS'), { 'retry-after': '1' }),
      json(202, job),
    );
    const started = Date.now();
    await client(s.fetch).screenshots.create({ url: 'https://example.com' });
    expect(s.requests).toHaveLength(3);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
  });

  it('throws at once when Retry-After passes the cap (PLAN_QUOTA_EXCEEDED until next month)', async () => {
    const s = scriptedFetch(json(429, envelope('PLAN_QUOTA_EXCEEDED'), { 'retry-after': '600000' }), json(202, job));
    const err = await client(s.fetch)
      .screenshots.create({ url: 'https://example.com' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GlimpseError);
    expect(err).toMatchObject({ status: 429, code: 'PLAN_QUOTA_EXCEEDED', requestId: 'req_test' });
    expect(s.requests).toHaveLength(1);

    const rateLimited = scriptedFetch(json(429, envelope('RATE_LIMITED'), { 'retry-after': '5' }), json(202, job));
    await expect(
      client(rateLimited.fetch, { maxRetryAfterMs: 4000 }).screenshots.create({ url: 'https://example.com' }),
    ).rejects.toMatchObject({ code: 'RATE_LIMITED' });
    expect(rateLimited.requests).toHaveLength(1);
  });

  it('retries 409 IDEMPOTENCY_IN_FLIGHT (an earlier attempt of the same call holds the key) with the same key', async () => {
    const s = scriptedFetch(new TypeError('socket hang up'), json(409, envelope('IDEMPOTENCY_IN_FLIGHT')), json(202, job));
    await client(s.fetch).screenshots.create({ url: 'https://example.com' });
    expect(s.requests).toHaveLength(3);
    expect(new Set(s.requests.map((r) => r.headers.get('idempotency-key'))).size).toBe(1);
  });

  it.each([
    [400, 'VALIDATION_FAILED'],
    [401, 'INVALID_API_KEY'],
    [404, 'NOT_FOUND'],
    [409, 'RUN_ALREADY_ENDED'],
    [422, 'IDEMPOTENCY_KEY_REUSED'],
  ])('never retries %i %s and throws it typed', async (status, code) => {
    const s = scriptedFetch(json(status, { ...envelope(code), details: { fields: [] } }), json(202, job));
    await expect(client(s.fetch).screenshots.create({ url: 'https://example.com' })).rejects.toMatchObject({
      name: 'GlimpseError',
      status,
      code,
      requestId: 'req_test',
      details: { fields: [] },
    });
    expect(s.requests).toHaveLength(1);
  });

  it('gives up after maxRetries with the last answer, or a GlimpseConnectionError', async () => {
    const s = scriptedFetch(json(500, envelope('INTERNAL_ERROR')));
    await expect(client(s.fetch, { maxRetries: 3 }).runs.get('run_1')).rejects.toMatchObject({ status: 500, code: 'INTERNAL_ERROR' });
    expect(s.requests).toHaveLength(4);

    const down = scriptedFetch(new TypeError('fetch failed'));
    await expect(client(down.fetch, { maxRetries: 1 }).runs.get('run_1')).rejects.toBeInstanceOf(GlimpseConnectionError);
    expect(down.requests).toHaveLength(2);
  });

  it('times an attempt out after timeoutMs, and stops at once when the caller aborts', async () => {
    const hang = (req: Request) =>
      new Promise<Response>((_, reject) => req.signal.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError'))));
    await expect(client(hang, { maxRetries: 1, timeoutMs: 50 }).runs.get('run_1')).rejects.toMatchObject({
      name: 'GlimpseTimeoutError',
      code: 'TIMEOUT',
    });

    const controller = new AbortController();
    const calls: Request[] = [];
    const pending = client(async (req) => (calls.push(req), hang(req))).runs.get('run_1', { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('user gave up')), 20);
    await expect(pending).rejects.toThrow('user gave up');
    expect(calls).toHaveLength(1);
  });
});

describe('retryAfterMs, backoffMs, newIdempotencyKey and the error code type', () => {
  it('builds version 4 UUIDs also without crypto.randomUUID', () => {
    const randomUUID = globalThis.crypto.randomUUID;
    try {
      Object.defineProperty(globalThis.crypto, 'randomUUID', { value: undefined, configurable: true });
      const keys = Array.from({ length: 50 }, () => newIdempotencyKey());
      for (const k of keys) expect(k).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(new Set(keys).size).toBe(50);
    } finally {
      Object.defineProperty(globalThis.crypto, 'randomUUID', { value: randomUUID, configurable: true });
    }
  });

  it('types code as the documented codes (checked when compiling)', () => {
    const documented: GlimpseApiErrorCode[] = [
      'VALIDATION_FAILED',
      'PLAN_QUOTA_EXCEEDED',
      'RUN_ALREADY_ENDED',
      'DELIVERY_IN_PROGRESS',
      'SERVICE_UNAVAILABLE',
    ];
    // @ts-expect-error a code no operation documents
    const unknown: GlimpseApiErrorCode = 'NOT_A_DOCUMENTED_CODE';
    expect([...documented, unknown]).toHaveLength(6);
  });

  it('reads delta-seconds and HTTP dates', () => {
    expect(retryAfterMs('7')).toBe(7000);
    expect(retryAfterMs('Wed, 21 Oct 2026 07:28:10 GMT', Date.parse('Wed, 21 Oct 2026 07:28:00 GMT'))).toBe(10_000);
    expect(retryAfterMs('soon')).toBeUndefined();
    expect(retryAfterMs(null)).toBeUndefined();
  });

  it('doubles the cap per retry up to maxDelayMs, scaled by the jitter', () => {
    const policy = { initialDelayMs: 500, maxDelayMs: 8000 };
    expect([0, 1, 2, 3, 4, 5].map((retry) => backoffMs(retry, policy, () => 1))).toEqual([500, 1000, 2000, 4000, 8000, 8000]);
    expect(backoffMs(3, policy, () => 0.5)).toBe(2000);
  });
});
