import { readdirSync, readFileSync } from 'node:fs';
import { BrowserPool } from '../../src/browser/browser-pool';
import { startTestApp, TestApp } from '../support/test-app';

/** Pids of this process's descendants whose command line names Chromium. */
function chromiumDescendants(): number[] {
  const parentOf = new Map<number, number>();
  for (const name of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      parentOf.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      /* gone meanwhile */
    }
  }
  const descends = (pid: number): boolean => {
    for (let p = parentOf.get(pid); p !== undefined && p > 1; p = parentOf.get(p)) if (p === process.pid) return true;
    return false;
  };
  return [...parentOf.keys()].filter((pid) => {
    if (!descends(pid)) return false;
    try {
      return /chrom/i.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
    } catch {
      return false;
    }
  });
}

/**
 * docs/security.md, "The browser is an attacker-controlled process": no credentials in its environment;
 * `/ready` says nothing about its sandbox, `/metrics` does (CONTRACT.md "Tenancy: fair share and
 * isolation", "The browser"). The tests run with CHROMIUM_SANDBOX=off (test/support/global-setup.ts).
 */
describe('the browser’s environment and sandbox', () => {
  let t: TestApp;
  const saved = { ...process.env };

  beforeAll(async () => {
    process.env.DATABASE_URL = 'postgres://canary-user:canary-password@db/glimpse';
    process.env.WEBHOOK_SECRET_KEY = 'c'.repeat(64);
    process.env.S3_SECRET_ACCESS_KEY = 'canary-s3-secret';
    t = await startTestApp();
  });

  afterAll(async () => {
    await t?.close();
    process.env = saved;
  });

  it('with CHROMIUM_SANDBOX=off: /ready reports the browser up and nothing about a sandbox; /metrics says glimpse_browser_sandbox 0', async () => {
    expect(t.config.chromiumSandbox).toBe(false);
    // Readiness may lag the app's start on a loaded machine (the browser's first launch): poll, with a deadline.
    const deadline = Date.now() + 30_000;
    let ready = await fetch(`${t.baseUrl}/ready`);
    while (ready.status !== 200 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      ready = await fetch(`${t.baseUrl}/ready`);
    }
    expect(ready.status).toBe(200);
    const text = await ready.text();
    expect(JSON.parse(text).details.browser).toEqual({ status: 'up' });
    expect(text).not.toMatch(/sandbox/i);
    const metrics = await (await fetch(`${t.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(/^# TYPE glimpse_browser_sandbox gauge$/m);
    expect(metrics).toMatch(/^glimpse_browser_sandbox 0$/m);
  });

  it('launches Chromium without the service’s credentials in any of its processes’ environment', async () => {
    await t.get(BrowserPool).ensureBrowser();
    const pids = chromiumDescendants();
    expect(pids.length).toBeGreaterThan(0);
    for (const pid of pids) {
      let environ: string;
      try {
        environ = readFileSync(`/proc/${pid}/environ`, 'utf8');
      } catch {
        continue; // ended meanwhile
      }
      const names = environ
        .split('\0')
        .filter(Boolean)
        .map((kv) => kv.split('=')[0]);
      expect(names).not.toContain('DATABASE_URL');
      expect(names).not.toContain('WEBHOOK_SECRET_KEY');
      expect(names).not.toContain('S3_SECRET_ACCESS_KEY');
      expect(environ).not.toContain('canary');
    }
  });
});
