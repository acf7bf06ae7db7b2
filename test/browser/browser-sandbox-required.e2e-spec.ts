import { readFileSync } from 'node:fs';
import { SANDBOX_PROBE, SandboxProbe } from '../../src/browser/browser-sandbox';
import { BROWSER_LAUNCHER, BrowserLauncher, launchChromium } from '../../src/browser/chromium-launch';
import { PageServer, startPageServer } from '../support/page-server';
import { waitForRun } from '../support/runs';
import { startTestApp, TestApp, waitForJob } from '../support/test-app';

/** A sandbox probe that finds nothing against it (non-root, user namespaces allowed): the pool tries a sandboxed launch. */
const probeSaysPossible: SandboxProbe = { uid: 1000, read: () => null };

/**
 * A sandboxed launch that fails as Chromium's does where its sandbox cannot start: as root (the test
 * machines) the real Chromium, which refuses to run sandboxed as root; otherwise Chromium's refusal
 * without user namespaces, given here. A launch without the sandbox is the real one.
 */
const sandboxCannotStart: BrowserLauncher = (request) =>
  !request.sandbox || process.getuid?.() === 0
    ? launchChromium(request)
    : Promise.reject(new Error('browserType.launch: Target page, context or browser has been closed\nNo usable sandbox!'));

/** The value of the metric sample `line` (`name{labels}`) in a `/metrics` text, or null. */
function metric(text: string, line: string): number | null {
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? null : Number(found.slice(line.length + 1));
}

const scrape = async (t: TestApp) => (await fetch(`${t.baseUrl}/metrics`)).text();

/**
 * CONTRACT.md "Tenancy: fair share and isolation", "The browser": with CHROMIUM_SANDBOX=on (the
 * default) a worker whose sandboxed launch fails takes no work: its `/ready` fails on the browser check
 * without saying why, its capture and run processors take no job (they stay pending; another worker
 * runs them: nothing lost or failed), and its start-up log says why and how to fix it.
 */
describe('CHROMIUM_SANDBOX=on with a sandbox that cannot start', () => {
  let refused: TestApp;
  let other: TestApp | undefined;
  let pages: PageServer;
  let key: string;

  beforeAll(async () => {
    pages = await startPageServer({ '/plain': '<html><body><h1>Hello</h1></body></html>' });
    refused = await startTestApp({
      env: { CHROMIUM_SANDBOX: 'on' },
      override: (builder) =>
        builder.overrideProvider(SANDBOX_PROBE).useValue(probeSaysPossible).overrideProvider(BROWSER_LAUNCHER).useValue(sandboxCannotStart),
    });
    ({ key } = await refused.createKey());
  });

  afterAll(async () => {
    await other?.close();
    await refused?.close();
    await pages?.close();
  });

  it('logs at start why and how to fix it, in one line', () => {
    const lines = readFileSync(refused.logFile, 'utf8')
      .split('\n')
      .filter((l) => l.includes("Chromium's sandbox cannot start"));
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]).msg).toMatch(
      /a sandboxed launch failed: .*this worker takes no captures or runs.*non-root.*CHROMIUM_SANDBOX=off/,
    );
  });

  it('/ready is 503 naming the browser check, and nothing about a sandbox; glimpse_browser_sandbox is 0', async () => {
    const res = await fetch(`${refused.baseUrl}/ready`);
    const text = await res.text();
    expect(res.status).toBe(503);
    const body = JSON.parse(text);
    expect(Object.keys(body.error)).toEqual(['browser']);
    expect(body.details.postgres.status).toBe('up');
    expect(text).not.toMatch(/sandbox/i);
    expect(metric(await scrape(refused), 'glimpse_browser_sandbox')).toBe(0);
  });

  it('takes no capture and no run: they stay pending, and a worker that can run them does', async () => {
    const capture = await refused.request('POST', '/v1/screenshot', { key, body: { url: `${pages.url}/plain` } });
    expect(capture.status).toBe(202);
    const run = await refused.request('POST', '/v1/runs', { key, body: { url: `${pages.url}/plain`, video: false } });
    expect(run.status).toBe(202);
    // Bounded: a few answers of the refused worker, each a round trip through PostgreSQL.
    for (let i = 0; i < 5; i++) {
      expect((await refused.request('GET', `/v1/screenshot/${capture.body.id}`, { key })).body.status).toBe('pending');
      expect((await refused.request('GET', `/v1/runs/${run.body.id}`, { key })).body.status).toBe('pending');
    }

    other = await startTestApp({ queuePrefix: refused.config.queuePrefix, env: { CHROMIUM_SANDBOX: 'off' } });
    expect((await waitForJob(other, key, capture.body.id)).status).toBe('done');
    expect((await waitForRun(other, key, run.body.id, 30_000)).status).toBe('completed');

    // The other worker did both; the refused one started none.
    const done = (t: string) => metric(t, 'glimpse_captures_total{status="done",format="png"}');
    expect(done(await scrape(other))).toBe(1);
    expect(done(await scrape(refused))).toBe(0);
    expect(metric(await scrape(refused), 'glimpse_captures_total{status="failed",format="png"}')).toBe(0);
  });
});
