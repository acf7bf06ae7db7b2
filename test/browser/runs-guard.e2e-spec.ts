import { execFileSync } from 'node:child_process';
import { AddressPolicy, blockedAddressReason } from '../../src/egress/address-policy';
import { PageServer, startPageServer } from '../support/page-server';
import { waitForRun } from '../support/runs';
import { startTestApp, TestApp } from '../support/test-app';

/** Runs in a row for the leak check: a renderer, browser or ffmpeg left per run would be far past its allowance of 6. */
const RUNS = 25;

/** Commands of the processes descending from this one (the test app's Chromium and ffmpeg among them). */
function descendants(): string[] {
  const rows = execFileSync('ps', ['-eo', 'pid=,ppid=,comm='])
    .toString()
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s+/));
  const children = new Map<string, string[][]>();
  for (const row of rows) children.set(row[1], [...(children.get(row[1]) ?? []), row]);
  const out: string[] = [];
  const walk = (pid: string) => {
    for (const row of children.get(pid) ?? []) {
      out.push(row[2]);
      walk(row[0]);
    }
  };
  walk(String(process.pid));
  return out;
}

/**
 * Runs with the SSRF guard on (`SSRF_ALLOW_PRIVATE=false`), on loopback only: the address policy
 * treats 127.0.0.2 as a public address and everything else as usual, so 127.0.0.1 stands for the
 * private network. Then 50 runs in a row, and no Chromium or ffmpeg left once the service stops.
 */
describe('browser session runs: SSRF guard and processes', () => {
  const PUBLIC = '127.0.0.2';
  let t: TestApp;
  let key: string;
  let internal: PageServer;
  let site: PageServer;
  let internalHits = 0;

  beforeAll(async () => {
    internal = await startPageServer({
      '/secret': (_req, res) => {
        internalHits++;
        res.writeHead(200, { 'content-type': 'text/html' }).end('<title>internal</title><h1>internal secret</h1>');
      },
    });
    site = await startPageServer(
      {
        '/': '<!doctype html><title>Public</title><h1>public page</h1>',
        '/link': `<!doctype html><title>Links</title><a id="in" href="http://127.0.0.1:${internal.port}/secret">internal</a>`,
      },
      PUBLIC,
    );
    t = await startTestApp({
      env: { SSRF_ALLOW_PRIVATE: 'false' },
      override: (b) =>
        b.overrideProvider(AddressPolicy).useValue({ blockedReason: (a: string) => (a === PUBLIC ? null : blockedAddressReason(a)) }),
    });
    ({ key } = await t.createKey());
  });

  afterAll(async () => {
    await t?.close();
    await site.close();
    await internal.close();
  });

  it('fails a goto to a blocked address with "Target not allowed", and a click that navigates there never reaches it', async () => {
    const res = await t.request('POST', '/v1/runs', {
      key,
      body: {
        url: `${site.url}/link`,
        video: false,
        steps: [
          { action: 'click', selector: '#in' },
          { action: 'goto', url: `http://127.0.0.1:${internal.port}/secret` },
          { action: 'screenshot' },
        ],
      },
    });
    expect(res.status).toBe(202);
    const run = await waitForRun(t, key, res.body.id);
    expect(run.status).toBe('failed');
    expect(run.failure).toEqual({ stage: 'step', stepIndex: 1 });
    expect(run.finalizationError).toMatch(
      new RegExp(`^step 1 \\(goto "http://127\\.0\\.0\\.1:${internal.port}/secret"\\): Target not allowed: `),
    );
    expect(run.steps.map((s: any) => s.status)).toEqual(['ok', 'failed', 'skipped']);
    expect(run.networkErrors).toContainEqual(
      expect.objectContaining({
        url: `http://127.0.0.1:${internal.port}/secret`,
        status: null,
        failure: expect.stringMatching(/^Target not allowed: /),
      }),
    );
    expect(internalHits).toBe(0);
  });

  it(`runs ${RUNS} runs in a row with video and leaves no ffmpeg running, and no Chromium once the service stops`, async () => {
    const before = descendants().filter((c) => /chrom/i.test(c)).length;
    for (let i = 0; i < RUNS; i++) {
      const res = await t.request('POST', '/v1/runs', {
        key,
        body: { url: `${site.url}/`, width: 320, height: 240, steps: [{ action: 'screenshot' }] },
      });
      expect(res.status).toBe(202);
      const run = await waitForRun(t, key, res.body.id);
      expect(run.status).toBe('completed');
    }
    const after = descendants();
    expect(after.filter((c) => /ffmpeg/.test(c))).toEqual([]);
    // The pool's browser stays (with its warm contexts' renderers); no renderer or browser per run piles up.
    expect(after.filter((c) => /chrom/i.test(c)).length).toBeLessThanOrEqual(Math.max(before, 1) + 6);
    await t.close();
    t = undefined as unknown as TestApp;
    await new Promise((r) => setTimeout(r, 500));
    expect(descendants().filter((c) => /chrom|ffmpeg/i.test(c))).toEqual([]);
  }, 600_000);
});
