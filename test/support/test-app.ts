import { INestApplication, Type } from '@nestjs/common';
import { Test, TestingModuleBuilder } from '@nestjs/testing';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, fetch } from 'undici';
import { AccountsService } from '../../src/accounts/accounts.service';
import { Plan } from '../../src/accounts/plan';
import { AppModule } from '../../src/app.module';
import { ApiKeysService } from '../../src/auth/api-keys.service';
import { AppConfig, loadConfig } from '../../src/config/app-config';
import { configureApp } from '../../src/configure-app';
import { LOG_DESTINATION } from '../../src/logging/logging.module';
import { WorkEndWaiter } from '../../src/queue/work-ended';

/** A running test instance of the service on 127.0.0.1 with its own queue prefix and storage directory. */
export interface TestApp {
  app: INestApplication;
  config: AppConfig;
  /** e.g. `http://127.0.0.1:40123` */
  baseUrl: string;
  /** The file this app's log lines (JSON, level info and up) are written to. */
  logFile: string;
  /** A provider of the app's module graph. */
  get<T>(type: Type<T> | string | symbol): T;
  /** Creates an account on `plan` with one key; returns the secret and ids. */
  createKey(plan?: Plan): Promise<{ key: string; keyId: string; accountId: string }>;
  /** `fetch` against the app with JSON body handling and a Bearer key. */
  request(
    method: string,
    path: string,
    options?: { key?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<TestResponse>;
  /** Closes the app, then {@link release}s its files. */
  close(): Promise<void>;
  /** Ends the log stream and deletes the storage directory, for an app the test closed itself (e.g. by the SIGTERM drain). */
  release(): Promise<void>;
}

/**
 * The connections of {@link TestApp.request}: an idle one is closed after 1 s, well before the app's
 * server closes it (Node's `keepAliveTimeout`, 5 s). With the client's default (the server's hint less
 * 1 s), a request sent on a connection the server was closing at that moment failed with "other side
 * closed" on a 2-core machine busy with the suite, whose timers ran late.
 */
const testClient = new Agent({ keepAliveTimeout: 1000, keepAliveMaxTimeout: 1000 });

export interface TestResponse {
  status: number;
  headers: Headers;
  body: any;
}

export interface TestAppOptions {
  /** Environment variables on top of the test defaults. */
  env?: Record<string, string>;
  /** Run the queue processors (default true). */
  runProcessors?: boolean;
  /**
   * Bull queue prefix to use instead of a fresh one: pass the `config.queuePrefix` of a closed app to
   * simulate a restart of the service against the same Redis state.
   */
  queuePrefix?: string;
  /** Provider overrides, e.g. a fixed Clock. */
  override?: (builder: TestingModuleBuilder) => TestingModuleBuilder;
}

/**
 * Starts the real app (real PostgreSQL database of this run, real Redis under a fresh prefix unless
 * `queuePrefix` is given, real Chromium) listening on 127.0.0.1 with an ephemeral port.
 * `SSRF_ALLOW_PRIVATE=true` by default, since every test page is served on loopback.
 */
export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const storageDir = mkdtempSync(join(tmpdir(), 'glimpse-test-'));
  const config = loadConfig({
    ...process.env,
    DATABASE_URL: required('GLIMPSE_TEST_DATABASE_URL'),
    // Random, not a counter: jest gives each test file its own module registry, so a counter would
    // start again at 1 in every file and apps of different files would share (and drain) one queue.
    QUEUE_PREFIX: options.queuePrefix ?? workerQueuePrefix(randomBytes(4).toString('hex')),
    STORAGE_DIR: storageDir,
    SSRF_ALLOW_PRIVATE: 'true',
    CAPTURE_TIMEOUT_MS: '10000',
    // Two captures at once per test app, not the default 2 × cores: five test files run at once on the
    // test machine's cores (docs/testing.md, "One pool").
    CAPTURE_CONCURRENCY: '2',
    LOG_LEVEL: 'log',
    LOG_FORMAT: 'json',
    ...options.env,
  });
  const logFile = join(required('GLIMPSE_TEST_LOG_DIR'), `${process.pid}-${randomBytes(4).toString('hex')}.log`);
  const logStream = createWriteStream(logFile, { flags: 'a' });
  let builder = Test.createTestingModule({
    imports: [AppModule.register({ config, runProcessors: options.runProcessors ?? true })],
  })
    .overrideProvider(LOG_DESTINATION)
    .useValue(logStream);
  if (options.override) builder = options.override(builder);
  const moduleRef = await builder.compile();
  const app = moduleRef.createNestApplication({ bodyParser: false, bufferLogs: true });
  configureApp(app);
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address() as { port: number };
  config.publicBaseUrl = `http://127.0.0.1:${address.port}`;
  const baseUrl = config.publicBaseUrl;

  const release = async () => {
    await new Promise((resolve) => logStream.end(resolve));
    rmSync(storageDir, { recursive: true, force: true });
  };
  return {
    app,
    config,
    baseUrl,
    logFile,
    get: (type) => app.get(type, { strict: false }),
    async createKey(plan: Plan = 'pro') {
      const account = await app.get(AccountsService).create(`user-${Math.random().toString(36).slice(2)}@test.local`, plan);
      const created = await app.get(ApiKeysService).create(account.id, 'test');
      return { key: created.key, keyId: created.id, accountId: account.id };
    },
    async request(method, path, { key, body, headers = {} } = {}) {
      const res = await fetch(baseUrl + path, {
        dispatcher: testClient,
        method,
        headers: {
          ...(key ? { authorization: `Bearer ${key}` } : {}),
          ...(body !== undefined && typeof body !== 'string' ? { 'content-type': 'application/json' } : {}),
          ...headers,
        },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        /* not JSON: keep the text */
      }
      return { status: res.status, headers: res.headers, body: parsed };
    },
    async close() {
      await app.close();
      await release();
    },
    release,
  };
}

/** A Redis key prefix of its own under this jest worker's (test/support/worker-env.ts): `<worker prefix>_<name>`. */
export function workerQueuePrefix(name: string): string {
  return `${required('GLIMPSE_TEST_QUEUE_PREFIX')}_${name}`;
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the e2e tests through jest's global setup`);
  return value;
}

/**
 * One poll: `GET path` with `key`, or null when the connection was reset (`ECONNRESET`: seen in the
 * blockers test on a loaded machine, most likely a kept-alive connection closed by the app as the client
 * reused it) and `deadline` (epoch ms) has not passed, so the caller polls again. Throws any other error.
 */
async function pollGet(t: TestApp, path: string, key: string, deadline: number): Promise<TestResponse | null> {
  try {
    return await t.request('GET', path, { key });
  } catch (err) {
    if ((err as { cause?: { code?: string } }).cause?.code === 'ECONNRESET' && Date.now() < deadline) return null;
    throw err;
  }
}

/** How often {@link waitUntilEnded} reads the object without having heard of its end (a notification it could have missed). */
const UNHEARD_READ_MS = 1_000;
/** How often it reads when the app cannot listen (its PostgreSQL connection for notifications cannot be opened). */
const NOT_LISTENING_READ_MS = 50;

/**
 * `GET path` (ending with the object's id) with `key` until its `status` is one of `ended`; returns its body (throws after
 * `timeoutMs`). Reads when the app's {@link WorkEndWaiter} hears the object's id on the work-ended channel
 * (CONTRACT.md, "Synchronous answers": what `Prefer: wait` waits on), and every {@link UNHEARD_READ_MS}
 * besides, instead of polling every few ms: each read is a request the app spends CPU on.
 */
export async function waitUntilEnded(t: TestApp, path: string, key: string, ended: readonly string[], timeoutMs: number): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  const id = path.slice(path.lastIndexOf('/') + 1);
  let status = 'unknown';
  const read = async () => {
    const res = await pollGet(t, path, key, deadline);
    if (res) status = res.body.status;
    return res && ended.includes(status) ? res.body : null;
  };
  for (;;) {
    const slice = Math.max(0, Math.min(UNHEARD_READ_MS, deadline - Date.now()));
    const sliceStarted = Date.now();
    const body = await t.get(WorkEndWaiter).waitForEnd(id, slice, read);
    if (body) return body;
    if (Date.now() > deadline) throw new Error(`${path} still ${status} after ${timeoutMs} ms`);
    // The waiter answers at once when it cannot listen: poll then.
    if (Date.now() - sliceStarted < slice) await new Promise((r) => setTimeout(r, NOT_LISTENING_READ_MS));
  }
}

/** Waits for `GET /v1/screenshot/:id` to show the job `done` or `failed` (at most `timeoutMs`); returns the job. */
export function waitForJob(t: TestApp, key: string, id: string, timeoutMs = 30000): Promise<any> {
  return waitUntilEnded(t, `/v1/screenshot/${id}`, key, ['done', 'failed'], timeoutMs);
}
