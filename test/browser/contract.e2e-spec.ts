import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import {
  ContractValidator,
  DocOperation,
  Json,
  loadCommittedDocument,
  OPENAPI_PATH,
  operationsOf,
  propertiesOf,
  resolveRef,
} from '../support/openapi-contract';
import { ApiKeysService } from '../../src/auth/api-keys.service';
import { PageServer, startPageServer } from '../support/page-server';
import { waitForRun } from '../support/runs';
import { startTestApp, TestApp, waitForJob } from '../support/test-app';

/*
 * The contract test: walks the committed openapi/openapi.json and, for every operation, sends a valid
 * request and the invalid ones its documented statuses call for, against the running app, and
 * validates every response (status, headers, body) against the document. Generic over operations:
 * a new operation only needs an entry in RECIPES saying how to build a valid request.
 */

/** What a request is made of; `body` is JSON unless `rawBody` or `form` (multipart) is given. */
interface RequestParts {
  pathParams?: Record<string, string>;
  body?: unknown;
  rawBody?: string;
  /** Multipart fields; a Blob value is sent as a file part. */
  form?: Record<string, string | Blob>;
  contentType?: string;
  headers?: Record<string, string>;
  /** false: send no Authorization header; a string: send it instead of the test key. */
  auth?: false | string;
  /** Query string appended to the path as it is (starting with `?`). */
  query?: string;
}

/** A request with the status (and optionally header values) it must get. */
interface Variant {
  name: string;
  parts: RequestParts;
  status: number;
  expectHeaders?: Record<string, string>;
}

interface Context {
  t: TestApp;
  pages: PageServer;
  key: string;
  /** A key of the same account that was revoked. */
  revokedKey: string;
  /** A key whose monthly quota is used up (plan `legacy_free` with `LEGACY_FREE_CAP=0`). */
  exhaustedKey: string;
  /** A screenshot job of the test key that is `done`. */
  doneScreenshotId(): Promise<string>;
  /** A webhook endpoint of the test key's account (the same one on every call), delivering to the page server. */
  webhookEndpointId(): Promise<string>;
  /** A new webhook endpoint, for operations that consume it (delete). */
  newWebhookEndpointId(): Promise<string>;
  /** A browser session run of the test key that is `completed` (the same one on every call). */
  completedRunId(): Promise<string>;
  /** A new run that stays `pending` or `running` for a while (a 10 s wait step), for cancel. */
  newLongRunId(): Promise<string>;
  /** Path parameters `{ id, deliveryId }` of a test.ping delivery to the page server's `path` once it is `status`. */
  webhookDelivery(path: string, status: string): Promise<Record<string, string>>;
}

interface Recipe {
  /** A valid request; the operation's documented 2xx status is expected. */
  valid(ctx: Context): Promise<RequestParts> | RequestParts;
  /** Path parameters of a well-formed id that does not exist (expected 404). */
  unknownPathParams?: Record<string, string>;
  /** Requests for statuses the generic variants cannot provoke (quota, idempotency, …). */
  scenarios?(ctx: Context, valid: RequestParts): Variant[];
  /** Documented statuses this test cannot provoke for the operation, with the reason. */
  notExercised?: Record<number, string>;
}

/** Statuses no operation can be made to return from outside, with the reason. */
const NEVER_EXERCISED: Record<number, string> = {
  500: 'needs a broken dependency (PostgreSQL/Redis down); the envelope of a 500 has the same schema as every other error',
  503: 'needs PostgreSQL stopped: test/system/outage-postgres-stopped.e2e-spec.ts checks the SERVICE_UNAVAILABLE envelope and Retry-After',
};

/** A delivery that is `retrying` (its receiver answers 500), set by the retryWebhookDelivery recipe. */
let retryingDelivery: Record<string, string> = {};

/**
 * Statuses documented on every authenticated operation for a rule of the whole pipeline, provoked
 * (and validated against the document) by a test file of their own. Only when the status carries no
 * other code for the operation.
 */
const PIPELINE_WIDE: Record<number, { codes: string[]; where: string }> = {
  403: { codes: ['ORGANIZATION_MISMATCH'], where: 'test/organization-id.e2e-spec.ts (X-Organization-ID naming another account)' },
  429: { codes: ['RATE_LIMITED'], where: 'test/abuse-limits.e2e-spec.ts (RATE_LIMIT_PER_SECOND on an instance of its own)' },
};

/** Whether `status` of `op` documents only codes of {@link PIPELINE_WIDE}, which its own test file provokes. */
function provokedElsewhere(op: DocOperation, status: number): boolean {
  const wide = PIPELINE_WIDE[status];
  const response = op.operation.responses[String(status)];
  const codes: string[] | undefined = response?.content?.['application/json']?.schema?.allOf?.[1]?.properties?.code?.enum;
  return !!wide && !!codes && codes.every((c) => wide.codes.includes(c));
}
/** A storage destination body whose endpoint is the page server (no bucket: its test answers `ok: false`). */
function storageDestinationBody(ctx: Context, description: string): Record<string, unknown> {
  return {
    type: 's3',
    bucket: 'contract',
    endpoint: ctx.pages.url,
    forcePathStyle: true,
    accessKeyId: 'id',
    secretAccessKey: 'secret',
    description,
  };
}

/** A new storage destination of the test key's account. */
async function newStorageDestinationId(ctx: Context): Promise<string> {
  return (await ctx.t.request('POST', '/v1/storage-destinations', { key: ctx.key, body: storageDestinationBody(ctx, 'contract') })).body.id;
}

/** A profile id of no account (404 wherever it is named). */
const NO_PROFILE = 'prf_000000000000000000000000';

/** A browser profile body: one cookie for the page server's host. */
function profileBody(name: string): Record<string, unknown> {
  return { name, allowedDomains: ['127.0.0.1'], storageState: { cookies: [{ name: 'session', value: 'contract', domain: '127.0.0.1' }] } };
}

/** A new browser profile of the test key's account. */
async function newProfileId(ctx: Context): Promise<string> {
  return (await ctx.t.request('POST', '/v1/profiles', { key: ctx.key, body: profileBody('contract') })).body.id;
}

/** A monitor body on the page server (paused unless `enabled`, so creating one starts no capture). */
function monitorBody(ctx: Context, description: string, enabled = false): Record<string, unknown> {
  return { url: `${ctx.pages.url}/page`, width: 320, height: 240, schedule: { intervalSeconds: 3600 }, enabled, description };
}

/** A new (paused) monitor of `key` (the test key by default). */
async function newMonitorId(ctx: Context, key = ctx.key): Promise<string> {
  return (await ctx.t.request('POST', '/v1/monitors', { key, body: monitorBody(ctx, 'contract') })).body.id;
}

/** A monitor of the key whose monthly quota is used up, set by the createMonitorCheck recipe. */
let exhaustedMonitorId = '';

/** A monitor with one ended check (`{ id, checkId }`), checked now and awaited. */
async function monitorWithEndedCheck(ctx: Context): Promise<{ id: string; checkId: string }> {
  const id = await newMonitorId(ctx);
  const { checkId } = (await ctx.t.request('POST', `/v1/monitors/${id}/check`, { key: ctx.key })).body;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const checks = (await ctx.t.request('GET', `/v1/monitors/${id}/checks`, { key: ctx.key })).body.data as {
      id: string;
      status: string;
    }[];
    if (checks.some((c) => c.id === checkId && c.status === 'baseline')) return { id, checkId };
    if (Date.now() > deadline) throw new Error(`check ${checkId} of ${id} did not end as the baseline in 30 s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A crawl of one page of the page server (links only, depth 0), waited for until it ended; its id. */
async function endedCrawlId(ctx: Context): Promise<string> {
  const body = { url: `${ctx.pages.url}/page`, maxDepth: 0, discover: 'links', capture: { width: 320, height: 240 } };
  const { id } = (await ctx.t.request('POST', '/v1/crawls', { key: ctx.key, body })).body;
  for (const deadline = Date.now() + 30_000; ; await new Promise((r) => setTimeout(r, 200))) {
    const { status } = (await ctx.t.request('GET', `/v1/crawls/${id}`, { key: ctx.key })).body;
    if (status !== 'pending' && status !== 'running') return id;
    if (Date.now() > deadline) throw new Error(`crawl ${id} still ${status} after 30 s`);
  }
}

/** A run that ended, set by the cancelRun recipe before its scenarios are built. */
let endedRunId = '';

/**
 * The Idempotency-Key scenarios of a write route: the first request with a key (`status`), its replay
 * (same status, `Idempotency-Replayed: true`), and the key reused with `otherBody` (422).
 */
function idempotencyScenarios(name: string, first: RequestParts, status: number, otherBody: unknown): Variant[] {
  const idempotent = { ...first, headers: { ...first.headers, 'Idempotency-Key': `${name}-${Date.now()}-${process.pid}` } };
  return [
    { name: 'first request with an Idempotency-Key', parts: idempotent, status },
    { name: 'replayed retry with the same Idempotency-Key', parts: idempotent, status, expectHeaders: { 'Idempotency-Replayed': 'true' } },
    { name: 'Idempotency-Key reused with another body', parts: { ...idempotent, body: otherBody }, status: 422 },
  ];
}

/** A second resource per idempotent route, so its keyed requests act on something the valid request left alone. */
const idempotentTargets: Record<string, Record<string, string>> = {};

/** Statuses of a render link that test/render-links.e2e-spec.ts provokes (each needs its own setup). */
const RENDER_LINK_ELSEWHERE: Record<number, string> = Object.fromEntries(
  [304, 400, 403, 414, 422, 429, 503].map((status) => [
    status,
    'test/render-links.e2e-spec.ts provokes it (with its own keys, pages and RENDER_WAIT_MS)',
  ]),
);

/** A signed render link of a new render key of the test key (CONTRACT.md, "Render links"), as path parameters and query. */
async function renderLinkParts(ctx: Context): Promise<RequestParts> {
  const rk = (await ctx.t.request('POST', '/v1/render-keys', { key: ctx.key, body: {} })).body;
  const url = `${ctx.pages.url}/page`;
  const enc = (v: string) => encodeURIComponent(v).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
  const canonical = `height=240&url=${enc(url)}&width=320`;
  const signature = createHmac('sha256', rk.secret).update(`GET\n/v1/render/${rk.id}.png\n${canonical}`).digest('hex');
  return { auth: false, pathParams: { file: `${rk.id}.png` }, query: `?${canonical}&signature=${signature}` };
}

/** How to build a valid request per operationId. Add an entry for each new operation. */
const RECIPES: Record<string, Recipe> = {
  createScreenshot: {
    valid: ({ pages }) => ({ body: { url: `${pages.url}/page`, width: 320, height: 240 } }),
    scenarios: (ctx, valid) => [
      { name: 'monthly quota used up', parts: { ...valid, auth: `Bearer ${ctx.exhaustedKey}` }, status: 429 },
      ...idempotencyScenarios('contract', valid, 202, { url: `${ctx.pages.url}/page?other` }),
      { name: 'Prefer: wait=30, ended in time', parts: { ...valid, headers: { Prefer: 'wait=30' } }, status: 200 },
      { name: 'a profile of no account', parts: { body: { ...(valid.body as object), profile: NO_PROFILE } }, status: 404 },
    ],
    notExercised: { 409: 'needs a request held in flight under the same key; test/idempotency.e2e-spec.ts provokes it' },
  },
  createScreenshotBatch: {
    valid: ({ pages }) => ({
      body: {
        items: [
          { url: `${pages.url}/page`, width: 320, height: 240 },
          { url: `${pages.url}/page`, format: 'pdf' },
        ],
      },
    }),
    scenarios: (ctx, valid) => {
      const idempotent = { ...valid, headers: { 'Idempotency-Key': `batch-${Date.now()}-${process.pid}` } };
      return [
        { name: 'no items', parts: { body: { items: [] } }, status: 400 },
        {
          name: 'an invalid item',
          parts: { body: { items: [{ url: `${ctx.pages.url}/page` }, { url: 'ftp://example.com' }] } },
          status: 400,
        },
        { name: 'monthly quota used up', parts: { ...valid, auth: `Bearer ${ctx.exhaustedKey}` }, status: 429 },
        {
          name: 'an item with a profile of no account',
          parts: { body: { items: [{ url: `${ctx.pages.url}/page`, profile: NO_PROFILE }] } },
          status: 404,
        },
        { name: 'first batch with an Idempotency-Key', parts: idempotent, status: 202 },
        { name: 'replayed batch', parts: idempotent, status: 202, expectHeaders: { 'Idempotency-Replayed': 'true' } },
        {
          name: 'Idempotency-Key reused with another body',
          parts: { ...idempotent, body: { items: [{ url: `${ctx.pages.url}/page?other` }] } },
          status: 422,
        },
      ];
    },
    notExercised: { 409: 'needs a request held in flight under the same key; test/idempotency.e2e-spec.ts provokes it' },
  },
  uploadScreenshot: {
    valid: () => ({ form: { file: html('<h1>Uploaded</h1>'), width: '320', height: '240' } }),
    scenarios: (ctx, valid): Variant[] => {
      const idempotent = { ...valid, headers: { 'Idempotency-Key': `upload-${Date.now()}-${process.pid}` } };
      return [
        { name: 'no file part', parts: { form: { width: '320' } }, status: 400 },
        { name: 'width below minimum', parts: { form: { ...valid.form, width: '50' } }, status: 400 },
        { name: 'unknown form field', parts: { form: { ...valid.form, notAField: 'x' } }, status: 400 },
        { name: 'file that is not HTML', parts: { form: { file: new Blob(['%PDF-1.4'], { type: 'application/pdf' }) } }, status: 415 },
        { name: 'file over 10 MiB', parts: { form: { file: html('a'.repeat(10 * 1024 * 1024 + 1)) } }, status: 413 },
        { name: 'monthly quota used up', parts: { ...valid, auth: `Bearer ${ctx.exhaustedKey}` }, status: 429 },
        { name: 'first upload with an Idempotency-Key', parts: idempotent, status: 202 },
        { name: 'replayed upload', parts: idempotent, status: 202, expectHeaders: { 'Idempotency-Replayed': 'true' } },
        { name: 'Idempotency-Key reused with another file', parts: { ...idempotent, form: { file: html('<h1>Other</h1>') } }, status: 422 },
        { name: 'Prefer: wait=30, ended in time', parts: { ...valid, headers: { Prefer: 'wait=30' } }, status: 200 },
      ];
    },
    notExercised: { 409: 'needs a request held in flight under the same key; test/idempotency.e2e-spec.ts provokes it' },
  },
  getScreenshot: {
    valid: async (ctx) => ({ pathParams: { id: await ctx.doneScreenshotId() } }),
    unknownPathParams: { id: 'scr_000000000000000000000000' },
  },
  createWebhookEndpoint: {
    valid: ({ pages }) => ({ body: { url: `${pages.url}/hook`, events: ['screenshot.completed'], description: 'contract test' } }),
    scenarios: (ctx, valid) => idempotencyScenarios('webhook', valid, 201, { url: `${ctx.pages.url}/hook?other` }),
    notExercised: {
      409: 'needs a request held in flight under the same key; test/idempotency.e2e-spec.ts provokes it',
      403: 'PLAN_LIMIT_REACHED needs an account at its plan limit; test/plan-limits.e2e-spec.ts provokes it',
    },
  },
  updateWebhookEndpoint: {
    valid: async (ctx) => ({
      pathParams: { id: await ctx.webhookEndpointId() },
      body: { description: 'contract test, patched', enabled: true },
    }),
    unknownPathParams: { id: 'we_000000000000000000000000' },
    scenarios: (_ctx, valid) => idempotencyScenarios('webhook-patch', valid, 200, { description: 'other' }),
    notExercised: { 409: 'needs a request held in flight under the same key; test/idempotency.e2e-spec.ts provokes it' },
  },
  listWebhookEndpoints: { valid: () => ({}) },
  rotateWebhookSecret: {
    valid: async (ctx) => ({ pathParams: { id: await ctx.webhookEndpointId() }, body: { expiresInSeconds: 60 } }),
    unknownPathParams: { id: 'we_000000000000000000000000' },
    scenarios: (_ctx, valid) => idempotencyScenarios('rotate', valid, 200, { expiresInSeconds: 120 }),
    notExercised: { 409: 'needs a request held in flight under the same key; test/idempotency.e2e-spec.ts provokes it' },
  },
  testWebhookEndpoint: {
    valid: async (ctx) => ({ pathParams: { id: await ctx.webhookEndpointId() } }),
    unknownPathParams: { id: 'we_000000000000000000000000' },
    scenarios: (_ctx, valid) => idempotencyScenarios('ping', valid, 202, { note: 'other' }),
    notExercised: { 409: 'needs a request held in flight under the same key; test/idempotency.e2e-spec.ts provokes it' },
  },
  listWebhookDeliveries: {
    valid: async (ctx) => ({ pathParams: { id: await ctx.webhookEndpointId() } }),
    unknownPathParams: { id: 'we_000000000000000000000000' },
  },
  retryWebhookDelivery: {
    valid: async (ctx) => {
      const ended = await ctx.webhookDelivery('/hook', 'successful');
      retryingDelivery = await ctx.webhookDelivery('/hook-fail', 'retrying');
      idempotentTargets.retryWebhookDelivery = await ctx.webhookDelivery('/hook', 'successful');
      return { pathParams: ended };
    },
    unknownPathParams: { id: 'we_000000000000000000000000', deliveryId: 'dlv_000000000000000000000000' },
    scenarios: () => [
      { name: 'delivery still retrying', parts: { pathParams: retryingDelivery }, status: 409 },
      ...idempotencyScenarios('resend', { pathParams: idempotentTargets.retryWebhookDelivery }, 202, { note: 'other' }),
    ],
  },
  createRenderKey: {
    valid: () => ({ body: { description: 'contract test', allowedHosts: ['example.com', '*.example.com'] } }),
    scenarios: (_ctx, valid) => idempotencyScenarios('render-key', valid, 201, { description: 'other' }),
    notExercised: {
      403: 'PLAN_LIMIT_REACHED needs an account at its plan limit; test/render-keys.e2e-spec.ts provokes it',
      409: 'needs a request held in flight under the same key; test/idempotency.e2e-spec.ts provokes it',
    },
  },
  listRenderKeys: { valid: () => ({}) },
  rotateRenderKey: {
    valid: async (ctx) => ({
      pathParams: { id: (await ctx.t.request('POST', '/v1/render-keys', { key: ctx.key, body: {} })).body.id },
      body: { expiresInSeconds: 60 },
    }),
    unknownPathParams: { id: 'rk_000000000000000000000000' },
    scenarios: (_ctx, valid) => idempotencyScenarios('render-key-rotate', valid, 200, { expiresInSeconds: 120 }),
    notExercised: { 409: 'needs a request held in flight under the same key; test/idempotency.e2e-spec.ts provokes it' },
  },
  deleteRenderKey: {
    valid: async (ctx) => ({ pathParams: { id: (await ctx.t.request('POST', '/v1/render-keys', { key: ctx.key, body: {} })).body.id } }),
    unknownPathParams: { id: 'rk_000000000000000000000000' },
  },
  createStorageDestination: {
    valid: (ctx) => ({ body: storageDestinationBody(ctx, 'contract test') }),
    scenarios: (ctx, valid) => idempotencyScenarios('storage-destination', valid, 201, storageDestinationBody(ctx, 'other')),
    notExercised: {
      403: 'PLAN_LIMIT_REACHED needs an account at its plan limit; test/browser/storage-destinations.e2e-spec.ts provokes it',
      409: 'needs a request held in flight under the same key; test/idempotency.e2e-spec.ts provokes it',
    },
  },
  listStorageDestinations: { valid: () => ({}) },
  getStorageDestination: {
    valid: async (ctx) => ({ pathParams: { id: await newStorageDestinationId(ctx) } }),
    unknownPathParams: { id: 'dst_000000000000000000000000' },
  },
  testStorageDestination: {
    valid: async (ctx) => ({ pathParams: { id: await newStorageDestinationId(ctx) } }),
    unknownPathParams: { id: 'dst_000000000000000000000000' },
  },
  deleteStorageDestination: {
    valid: async (ctx) => ({ pathParams: { id: await newStorageDestinationId(ctx) } }),
    unknownPathParams: { id: 'dst_000000000000000000000000' },
  },
  createProfile: {
    valid: () => ({ body: profileBody('contract test') }),
    scenarios: (_ctx, valid) => idempotencyScenarios('profile', valid, 201, profileBody('other')),
    notExercised: {
      403: 'PLAN_LIMIT_REACHED needs an account at its plan limit; test/browser/profiles.e2e-spec.ts provokes it',
      409: 'needs a request held in flight under the same key; test/idempotency.e2e-spec.ts provokes it',
    },
  },
  listProfiles: { valid: () => ({}) },
  getProfile: {
    valid: async (ctx) => ({ pathParams: { id: await newProfileId(ctx) } }),
    unknownPathParams: { id: NO_PROFILE },
  },
  updateProfile: {
    valid: async (ctx) => ({ pathParams: { id: await newProfileId(ctx) }, body: { name: 'renamed' } }),
    unknownPathParams: { id: NO_PROFILE },
  },
  deleteProfile: {
    valid: async (ctx) => ({ pathParams: { id: await newProfileId(ctx) } }),
    unknownPathParams: { id: NO_PROFILE },
  },
  createMonitor: {
    valid: (ctx) => ({ body: monitorBody(ctx, 'contract test') }),
    scenarios: (ctx, valid) => [
      ...idempotencyScenarios('monitor', valid, 201, monitorBody(ctx, 'other')),
      { name: 'a profile of no account', parts: { body: { ...monitorBody(ctx, 'no profile'), profile: NO_PROFILE } }, status: 404 },
    ],
    notExercised: {
      403: 'PLAN_LIMIT_REACHED needs an account at its plan limit; test/browser/monitors.e2e-spec.ts provokes it',
      409: 'needs a request held in flight under the same key; test/idempotency.e2e-spec.ts provokes it',
    },
  },
  listMonitors: { valid: () => ({}) },
  getMonitor: {
    valid: async (ctx) => ({ pathParams: { id: await newMonitorId(ctx) } }),
    unknownPathParams: { id: 'mon_000000000000000000000000' },
  },
  updateMonitor: {
    valid: async (ctx) => ({
      pathParams: { id: await newMonitorId(ctx) },
      body: { description: 'renamed', schedule: { intervalSeconds: 7200 } },
    }),
    unknownPathParams: { id: 'mon_000000000000000000000000' },
  },
  deleteMonitor: {
    valid: async (ctx) => ({ pathParams: { id: await newMonitorId(ctx) } }),
    unknownPathParams: { id: 'mon_000000000000000000000000' },
  },
  createMonitorCheck: {
    valid: async (ctx) => {
      exhaustedMonitorId = await newMonitorId(ctx, ctx.exhaustedKey);
      return { pathParams: { id: await newMonitorId(ctx) } };
    },
    unknownPathParams: { id: 'mon_000000000000000000000000' },
    scenarios: (ctx) => [
      { name: 'monthly quota used up', parts: { pathParams: { id: exhaustedMonitorId }, auth: `Bearer ${ctx.exhaustedKey}` }, status: 429 },
    ],
  },
  listMonitorChecks: {
    valid: async (ctx) => ({ pathParams: { id: await newMonitorId(ctx) } }),
    unknownPathParams: { id: 'mon_000000000000000000000000' },
  },
  updateMonitorBaseline: {
    valid: async (ctx) => {
      const { id, checkId } = await monitorWithEndedCheck(ctx);
      return { pathParams: { id }, body: { checkId } };
    },
    unknownPathParams: { id: 'mon_000000000000000000000000' },
  },
  getRenderLink: {
    valid: (ctx) => renderLinkParts(ctx),
    scenarios: (_ctx, valid) => [
      { name: 'wrong signature', parts: { ...valid, query: valid.query!.replace(/signature=[0-9a-f]/, 'signature=g') }, status: 401 },
    ],
    notExercised: RENDER_LINK_ELSEWHERE,
  },

  deleteWebhookEndpoint: {
    valid: async (ctx) => ({ pathParams: { id: await ctx.newWebhookEndpointId() } }),
    unknownPathParams: { id: 'we_000000000000000000000000' },
  },
  createRun: {
    valid: ({ pages }) => ({
      body: {
        url: `${pages.url}/page`,
        width: 320,
        height: 240,
        video: false,
        steps: [{ action: 'waitForSelector', selector: 'h1' }, { action: 'screenshot' }],
      },
    }),
    scenarios: (ctx, valid) => {
      const idempotent = { ...valid, headers: { 'Idempotency-Key': `contract-run-${Date.now()}-${process.pid}` } };
      return [
        { name: 'unknown step action', parts: { body: { url: `${ctx.pages.url}/page`, steps: [{ action: 'fly' }] } }, status: 400 },
        {
          name: 'saveProfile into a profile of no account',
          parts: { body: { url: `${ctx.pages.url}/page`, saveProfile: { profileId: NO_PROFILE } } },
          status: 404,
        },
        { name: 'monthly quota used up', parts: { ...valid, auth: `Bearer ${ctx.exhaustedKey}` }, status: 429 },
        { name: 'Prefer: wait=60, ended in time', parts: { ...valid, headers: { Prefer: 'wait=60' } }, status: 200 },
        { name: 'first request with an Idempotency-Key', parts: idempotent, status: 202 },
        {
          name: 'replayed retry with the same Idempotency-Key',
          parts: idempotent,
          status: 202,
          expectHeaders: { 'Idempotency-Replayed': 'true' },
        },
        {
          name: 'Idempotency-Key reused with another body',
          parts: { ...idempotent, body: { url: `${ctx.pages.url}/page?other` } },
          status: 422,
        },
      ];
    },
    notExercised: {
      403: 'PLAN_LIMIT_REACHED needs an account at its profile limit (saveProfile); test/browser/profiles.e2e-spec.ts provokes it',
      409: 'needs a request held in flight under the same key; test/idempotency.e2e-spec.ts provokes it',
    },
  },
  listRuns: {
    valid: async (ctx) => {
      await ctx.completedRunId();
      return {};
    },
  },
  getRun: {
    valid: async (ctx) => ({ pathParams: { id: await ctx.completedRunId() } }),
    unknownPathParams: { id: 'run_000000000000000000000000' },
  },
  createCrawl: {
    valid: ({ pages }) => ({ body: { url: `${pages.url}/page`, maxDepth: 0, discover: 'links', capture: { width: 320, height: 240 } } }),
    scenarios: (ctx) => [
      { name: 'maxDepth above 5', parts: { body: { url: `${ctx.pages.url}/page`, maxDepth: 6 } }, status: 400 },
      {
        name: 'capture.profile unknown',
        parts: { body: { url: `${ctx.pages.url}/page`, capture: { profile: 'prf_000000000000000000000000' } } },
        status: 404,
      },
      // The legacy_free key has the free plan's limits: maxPages at most 20.
      {
        name: 'maxPages above the plan cap',
        parts: { auth: `Bearer ${ctx.exhaustedKey}`, body: { url: `${ctx.pages.url}/page`, maxPages: 21 } },
        status: 403,
      },
    ],
  },
  listCrawls: {
    valid: async (ctx) => {
      await endedCrawlId(ctx);
      return {};
    },
  },
  getCrawl: {
    valid: async (ctx) => ({ pathParams: { id: await endedCrawlId(ctx) } }),
    unknownPathParams: { id: 'crl_000000000000000000000000' },
  },
  listCrawlPages: {
    valid: async (ctx) => ({ pathParams: { id: await endedCrawlId(ctx) } }),
    unknownPathParams: { id: 'crl_000000000000000000000000' },
  },
  cancelCrawl: {
    valid: async (ctx) => ({ pathParams: { id: await endedCrawlId(ctx) } }),
    unknownPathParams: { id: 'crl_000000000000000000000000' },
  },
  cancelRun: {
    valid: async (ctx) => {
      endedRunId = await ctx.completedRunId();
      idempotentTargets.cancelRun = { id: await ctx.newLongRunId() };
      return { pathParams: { id: await ctx.newLongRunId() } };
    },
    unknownPathParams: { id: 'run_000000000000000000000000' },
    scenarios: () => [
      { name: 'run already ended', parts: { pathParams: { id: endedRunId } }, status: 409 },
      ...idempotencyScenarios('cancel', { pathParams: idempotentTargets.cancelRun }, 202, { note: 'other' }),
    ],
  },
};

/** An HTML file part. */
const html = (content: string) => new Blob([`<!doctype html><html><body>${content}</body></html>`], { type: 'text/html' });

const doc = loadCommittedDocument();
const operations = operationsOf(doc);

describe('contract: every operation of openapi/openapi.json against the running app', () => {
  let t: TestApp;
  let pages: PageServer;
  let ctx: Context;
  const validator = new ContractValidator(doc);
  const exercised = new Map<string, Set<number>>();
  let requestCounter = 0;

  beforeAll(async () => {
    pages = await startPageServer({
      '/page': '<html><body><h1>Contract</h1></body></html>',
      '/hook': (_req, res) => res.writeHead(204).end(),
      '/hook-fail': (_req, res) => res.writeHead(500).end(),
    });
    t = await startTestApp({ env: { LEGACY_FREE_CAP: '0', WEBHOOK_ALLOW_HTTP: 'true' } });
    const { key } = await t.createKey('pro');
    const revoked = await t.createKey('pro');
    await t.get(ApiKeysService).revoke(revoked.keyId);
    const exhausted = await t.createKey('legacy_free');
    let doneId: Promise<string> | undefined;
    let endpointId: Promise<string> | undefined;
    let completedRun: Promise<string> | undefined;
    const newEndpoint = async () => {
      const created = await t.request('POST', '/v1/webhooks', { key, body: { url: `${pages.url}/hook` } });
      if (created.status !== 201) throw new Error(`setup webhook endpoint: ${created.status} ${JSON.stringify(created.body)}`);
      return created.body.id as string;
    };
    ctx = {
      t,
      pages,
      key,
      revokedKey: revoked.key,
      exhaustedKey: exhausted.key,
      doneScreenshotId: () =>
        (doneId ??= (async () => {
          const created = await t.request('POST', '/v1/screenshot', { key, body: { url: `${pages.url}/page`, width: 200, height: 200 } });
          const job = await waitForJob(t, key, created.body.id, 90_000);
          if (job.status !== 'done') throw new Error(`setup capture ended ${job.status}: ${job.error}`);
          return job.id as string;
        })()),
      webhookEndpointId: () => (endpointId ??= newEndpoint()),
      newWebhookEndpointId: newEndpoint,
      completedRunId: () =>
        (completedRun ??= (async () => {
          const created = await t.request('POST', '/v1/runs', {
            key,
            body: { url: `${pages.url}/page`, width: 320, height: 240, steps: [{ action: 'screenshot' }] },
          });
          const run = await waitForRun(t, key, created.body.id, 90_000);
          if (run.status !== 'completed') throw new Error(`setup run ended ${run.status}: ${run.finalizationError}`);
          return run.id as string;
        })()),
      newLongRunId: async () => {
        const created = await t.request('POST', '/v1/runs', {
          key,
          body: { url: `${pages.url}/page`, video: false, steps: [{ action: 'wait', ms: 10_000 }] },
        });
        if (created.status !== 202) throw new Error(`setup run: ${created.status} ${JSON.stringify(created.body)}`);
        return created.body.id as string;
      },
      async webhookDelivery(path, status) {
        const created = await t.request('POST', '/v1/webhooks', { key, body: { url: `${pages.url}${path}` } });
        const { deliveryId } = (await t.request('POST', `/v1/webhooks/${created.body.id}/test`, { key })).body;
        for (let i = 0; i < 400; i++) {
          const log = (await t.request('GET', `/v1/webhooks/${created.body.id}/deliveries`, { key })).body.data;
          if (log.some((d: { id: string; status: string }) => d.id === deliveryId && d.status === status))
            return { id: created.body.id, deliveryId };
          await new Promise((r) => setTimeout(r, 50));
        }
        throw new Error(`setup: delivery ${deliveryId} to ${path} never became ${status}`);
      },
    };
  });

  afterAll(async () => {
    process.stdout.write(`contract test: ${validator.validated} responses validated against ${OPENAPI_PATH}\n`);
    await t?.close();
    await pages?.close();
  });

  /** Sends `parts` for `op` and returns the problems of its response plus an unexpected status. */
  async function check(op: DocOperation, { name, parts, status: expectStatus, expectHeaders }: Variant): Promise<string[]> {
    let path = op.path;
    for (const [param, value] of Object.entries(parts.pathParams ?? {})) path = path.replace(`{${param}}`, encodeURIComponent(value));
    if (/\{[^}]+\}/.test(path)) return [`${name}: path parameters missing in ${path}`];
    const requestId = `contract-${process.pid}-${++requestCounter}`;
    const headers: Record<string, string> = { 'x-request-id': requestId, ...parts.headers };
    if (parts.auth !== false) headers.authorization = typeof parts.auth === 'string' ? parts.auth : `Bearer ${ctx.key}`;
    let body: string | FormData | undefined;
    if (parts.form && parts.rawBody === undefined) {
      body = new FormData();
      for (const [field, value] of Object.entries(parts.form)) {
        if (typeof value === 'string') body.append(field, value);
        else body.append(field, value, 'page.html');
      }
    } else if (parts.rawBody !== undefined || parts.body !== undefined) {
      body = parts.rawBody ?? JSON.stringify(parts.body);
      headers['content-type'] = parts.contentType ?? 'application/json';
    }
    const res = await fetch(t.baseUrl + path + (parts.query ?? ''), { method: op.method.toUpperCase(), headers, body });
    const received = { status: res.status, headers: res.headers, text: await res.text() };
    const problems = validator.problems(op, received);
    if (received.status !== expectStatus)
      problems.unshift(`expected ${expectStatus}, got ${received.status}: ${received.text.slice(0, 300)}`);
    else exercised.get(op.operationId)!.add(received.status);
    for (const [header, value] of Object.entries(expectHeaders ?? {})) {
      if (res.headers.get(header) !== value) problems.push(`expected ${header}: ${value}, got ${res.headers.get(header)}`);
    }
    // The request id is echoed, and an error body repeats it.
    if (res.headers.get('x-request-id') !== requestId) problems.push(`X-Request-ID not echoed: ${res.headers.get('x-request-id')}`);
    if (received.status >= 400) {
      try {
        const envelope = JSON.parse(received.text);
        if (envelope.requestId !== requestId) problems.push(`body requestId ${envelope.requestId} differs from X-Request-ID ${requestId}`);
      } catch {
        /* reported by the validator */
      }
    }
    return problems.map((p) => `${name}: ${p}`);
  }

  /**
   * Invalid variants of a valid request with the status the contract prescribes, built from the
   * operation's shape (security, JSON body, header patterns, path parameters), whether or not the
   * operation documents that status: an undocumented one then fails the validation.
   */
  function invalidVariants(op: DocOperation, valid: RequestParts, recipe: Recipe): Variant[] {
    const jsonBody = op.operation.requestBody ? resolveRef(doc, op.operation.requestBody).content?.['application/json'] : undefined;
    const variants: Variant[] = [];
    const add = (status: number, name: string, parts: RequestParts) => variants.push({ name, parts: { ...valid, ...parts }, status });

    if (op.operation.security?.length) {
      add(401, 'no Authorization header', { auth: false });
      add(401, 'unknown API key', { auth: `Bearer sk_live_${'0'.repeat(40)}` });
      add(401, 'not a Bearer header', { auth: 'Basic dXNlcjpwYXNz' });
      add(401, 'revoked API key', { auth: `Bearer ${ctx.revokedKey}` });
    }
    if (jsonBody) {
      add(400, 'body is not JSON', { rawBody: '{"url": ', body: undefined });
      add(400, 'unknown body field', { body: { ...(valid.body as object), notAField: true } });
      for (const violation of schemaViolations(resolveRef(doc, jsonBody.schema))) {
        add(400, `body ${violation.name}`, { body: { ...(valid.body as object), ...violation.patch } });
      }
      if (resolveRef(doc, jsonBody.schema).required?.length) add(400, 'empty body object', { body: {} });
      add(413, 'body over the size limit', { rawBody: JSON.stringify({ url: `https://example.com/${'a'.repeat(1024 * 1024)}` }) });
      add(415, 'text/plain body', { rawBody: 'url=https://example.com', contentType: 'text/plain' });
    }
    if (op.operation.requestBody && resolveRef(doc, op.operation.requestBody).content?.['multipart/form-data']) {
      add(415, 'text/plain instead of multipart', { rawBody: 'file=x', contentType: 'text/plain' });
    }
    for (const param of op.parameters.filter((p) => p.in === 'header' && p.schema?.pattern && p.name.toLowerCase() !== 'x-request-id')) {
      add(400, `${param.name} not matching ${param.schema.pattern}`, { headers: { ...valid.headers, [param.name]: 'bad value!' } });
    }
    const pathParams = op.parameters.filter((p) => p.in === 'path');
    if (pathParams.length) {
      add(404, 'malformed id', { pathParams: Object.fromEntries(pathParams.map((p) => [p.name, 'not-an-id'])) });
      if (recipe.unknownPathParams) add(404, 'unknown id', { pathParams: recipe.unknownPathParams });
    }
    return variants;
  }

  it('has a recipe for every operation (add one to RECIPES for a new operation)', () => {
    expect(operations.map((op) => op.operationId).filter((id) => !RECIPES[id])).toEqual([]);
  });

  it.each(operations.map((op) => [`${op.operationId} (${op.method.toUpperCase()} ${op.path})`, op] as const))(
    '%s: valid and documented invalid requests conform to the document',
    async (_label, op) => {
      const recipe = RECIPES[op.operationId];
      if (!recipe) throw new Error(`no recipe for ${op.operationId}`);
      exercised.set(op.operationId, new Set());
      const valid = await recipe.valid(ctx);
      // The answer without `Prefer: wait` (its 200 is a scenario: CONTRACT.md, "Synchronous answers").
      const prefers = (op.operation.parameters ?? []).some((p: { name?: string }) => p.name === 'Prefer');
      const success = Object.keys(op.operation.responses)
        .map(Number)
        .filter((s) => s >= 200 && s < 300 && !(prefers && s === 200));
      expect(success).toHaveLength(1);
      const problems = await check(op, { name: 'valid request', parts: valid, status: success[0] });
      const variants = [...invalidVariants(op, valid, recipe), ...(recipe.scenarios?.(ctx, valid) ?? [])];
      for (const variant of variants) problems.push(...(await check(op, variant)));
      expect(problems).toEqual([]);

      const unexplained = Object.keys(op.operation.responses)
        .map(Number)
        .filter(
          (s) => !exercised.get(op.operationId)!.has(s) && !NEVER_EXERCISED[s] && !recipe.notExercised?.[s] && !provokedElsewhere(op, s),
        );
      expect(unexplained).toEqual([]);
    },
    120_000,
  );

  it('serves the committed document at /docs/openapi.json and Swagger UI with Bearer "Authorize" at /docs', async () => {
    const served = await fetch(`${t.baseUrl}/docs/openapi.json`);
    expect(served.status).toBe(200);
    expect(await served.json()).toEqual(JSON.parse(readFileSync(OPENAPI_PATH, 'utf8')));
    const ui = await fetch(`${t.baseUrl}/docs`);
    expect(ui.status).toBe(200);
    expect(ui.headers.get('content-type')).toMatch(/^text\/html/);
    // "Authorize" offers the Bearer scheme, every operation requires it, and "Try it out" targets this server.
    expect(doc.components.securitySchemes.apiKey).toMatchObject({ type: 'http', scheme: 'bearer' });
    // Render links are signed instead (CONTRACT.md, "Render links"): no API key.
    for (const op of operations.filter((o) => !o.path.startsWith('/v1/render/'))) expect(op.operation.security).toEqual([{ apiKey: [] }]);
    for (const op of operations.filter((o) => o.path.startsWith('/v1/render/'))) expect(op.operation.security).toEqual([]);
    expect(doc.servers).toEqual([{ url: '/', description: expect.any(String) }]);
  });

  it('validated a response for every request it sent', () => {
    expect(validator.validated).toBeGreaterThanOrEqual(operations.length * 2);
  });
});

/**
 * Bodies that break one constraint of one property of a request schema: a value of the wrong type,
 * below `minimum`, above `maximum`, longer than `maxLength`, outside `enum`.
 */
function schemaViolations(schema: Json): { name: string; patch: Record<string, unknown> }[] {
  const out: { name: string; patch: Record<string, unknown> }[] = [];
  for (const [field, raw] of Object.entries<Json>(propertiesOf(doc, schema))) {
    const prop = resolveRef(doc, raw);
    const types = [prop.type].flat();
    out.push({ name: `${field} of the wrong type`, patch: { [field]: types.includes('string') ? 12345 : 'not-a-number-or-boolean' } });
    if (prop.minimum !== undefined) out.push({ name: `${field} below minimum`, patch: { [field]: prop.minimum - 1 } });
    if (prop.maximum !== undefined) out.push({ name: `${field} above maximum`, patch: { [field]: prop.maximum + 1 } });
    if (prop.maxLength !== undefined)
      out.push({ name: `${field} over maxLength`, patch: { [field]: `https://example.com/${'a'.repeat(prop.maxLength)}` } });
    if (prop.enum) out.push({ name: `${field} outside enum`, patch: { [field]: 'not-in-enum' } });
  }
  return out;
}
