import { startTestApp, TestApp } from '../support/test-app';

describe('X-Organization-ID and the OpenAPI declaration of the operational headers', () => {
  let t: TestApp;
  let key: string;
  const body = { url: 'http://127.0.0.1:9/org' };

  beforeAll(async () => {
    t = await startTestApp({ runProcessors: false });
    ({ key } = await t.createKey('free'));
  });

  afterAll(async () => {
    await t.close();
  });

  describe('X-Organization-ID', () => {
    it('is accepted and otherwise ignored when it matches [A-Za-z0-9_-]{6,64}', async () => {
      for (const org of ['org_12', 'Acme-Corp_2026', 'o'.repeat(64)]) {
        const created = await t.request('POST', '/v1/screenshot', { key, body, headers: { 'X-Organization-ID': org } });
        expect(created.status).toBe(202);
        const polled = await t.request('GET', `/v1/screenshot/${created.body.id}`, { key, headers: { 'X-Organization-ID': org } });
        expect(polled.status).toBe(200);
      }
    });

    it('is 400 INVALID_ORGANIZATION_ID on every /v1 request when it does not match', async () => {
      for (const org of ['', 'org12', 'o'.repeat(65), 'acme corp', 'acme.corp']) {
        for (const [method, path] of [
          ['POST', '/v1/screenshot'],
          ['GET', '/v1/screenshot/scr_000000000000000000000000'],
          ['GET', '/v1/no-such-route'],
        ]) {
          const res = await t.request(method, path, {
            key,
            body: method === 'POST' ? body : undefined,
            headers: { 'X-Organization-ID': org },
          });
          expect(res.status).toBe(400);
          expect(res.body).toEqual({
            error: expect.any(String),
            code: 'INVALID_ORGANIZATION_ID',
            requestId: res.headers.get('x-request-id'),
          });
        }
      }
    });

    it('is checked before authentication and only under /v1', async () => {
      const anonymous = await t.request('GET', '/v1/screenshot/scr_000000000000000000000000', { headers: { 'X-Organization-ID': 'bad' } });
      expect(anonymous.status).toBe(400);
      const file = await fetch(`${t.baseUrl}/files/${'a'.repeat(43)}.png`, { headers: { 'X-Organization-ID': 'bad' } });
      expect(file.status).toBe(404);
    });
  });

  describe('OpenAPI document', () => {
    let doc: any;

    beforeAll(async () => {
      doc = await (await fetch(`${t.baseUrl}/docs/openapi.json`)).json();
    });

    const header = (op: any, name: string) => op.parameters.find((p: any) => p.in === 'header' && p.name === name);
    const rateLimit = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'X-RateLimit-Policy'];

    it('declares Idempotency-Key and X-Organization-ID with their patterns on POST /v1/screenshot', () => {
      const op = doc.paths['/v1/screenshot'].post;
      expect(header(op, 'Idempotency-Key')).toMatchObject({
        required: false,
        schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{8,128}$' },
      });
      expect(header(op, 'X-Organization-ID')).toMatchObject({
        required: false,
        schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{6,64}$' },
      });
    });

    it('declares 409, 422 and 429 on POST /v1/screenshot, with the rate-limit headers, Retry-After and Idempotency-Replayed', () => {
      const responses = doc.paths['/v1/screenshot'].post.responses;
      const codes = {
        '409': ['IDEMPOTENCY_IN_FLIGHT'],
        '422': ['IDEMPOTENCY_KEY_REUSED'],
        '429': ['PLAN_QUOTA_EXCEEDED', 'TOO_MANY_PENDING_JOBS', 'RATE_LIMITED'],
      };
      for (const [status, code] of Object.entries(codes)) {
        // The envelope, with `code` narrowed to the status's codes.
        const [envelope, narrowed] = responses[status].content['application/json'].schema.allOf;
        expect(envelope.$ref).toBe('#/components/schemas/ErrorEnvelopeDto');
        expect(narrowed.properties.code.enum).toEqual(code);
        expect(Object.keys(responses[status].headers)).toEqual(expect.arrayContaining(rateLimit));
      }
      expect(responses['409'].description).toContain('IDEMPOTENCY_IN_FLIGHT');
      expect(responses['422'].description).toContain('IDEMPOTENCY_KEY_REUSED');
      expect(responses['429'].description).toContain('PLAN_QUOTA_EXCEEDED');
      expect(responses['429'].headers['Retry-After']).toMatchObject({ required: true, schema: { type: 'integer' } });
      expect(Object.keys(responses['202'].headers)).toEqual(expect.arrayContaining([...rateLimit, 'Idempotency-Replayed', 'X-Request-ID']));
      expect(responses['202'].headers['X-RateLimit-Policy'].schema.enum).toEqual(['legacy-free-grandfathered']);
      expect(Object.keys(responses['400'].headers)).toEqual(expect.arrayContaining(rateLimit));
      expect(Object.keys(responses['401'].headers)).toEqual(['X-Request-ID']);
    });

    it('declares the rate-limit headers on GET /v1/screenshot/{id}, which answers neither 409 nor 422, and 429 only RATE_LIMITED', () => {
      const op = doc.paths['/v1/screenshot/{id}'].get;
      expect(header(op, 'X-Organization-ID')).toBeDefined();
      expect(header(op, 'Idempotency-Key')).toBeUndefined();
      for (const status of ['200', '404']) expect(Object.keys(op.responses[status].headers)).toEqual(expect.arrayContaining(rateLimit));
      expect(op.responses['409']).toBeUndefined();
      expect(op.responses['422']).toBeUndefined();
      expect(op.responses['429'].content['application/json'].schema.allOf[1].properties.code.enum).toEqual(['RATE_LIMITED']);
      expect(op.responses['429'].headers['Retry-After']).toMatchObject({ required: true });
    });
  });
});
