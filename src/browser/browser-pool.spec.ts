import { Logger } from '@nestjs/common';
import { EventEmitter } from 'node:events';
import type { Browser } from 'playwright';
import type { AppConfig } from '../config/app-config';
import type { EgressProxy } from '../egress/egress-proxy';
import { Metrics } from '../metrics/metrics';
import { BrowserGoneError, BrowserPoolClosedError, BrowserUnavailableError, LeaseBudgetExceededError } from './browser-errors';
import { BROWSER_MAX_AGE_MS, BrowserPool, DEFAULT_VIEWPORT, Lease } from './browser-pool';
import type { SandboxProbe } from './browser-sandbox';
import { BrowserLauncher, LaunchRequest } from './chromium-launch';

/**
 * The pool's own rules (leasing, lanes, recycling, crash retry, budget, shutdown) with a fake launcher:
 * the browsers below keep the books a real one would (contexts, pages, connection), without Chromium.
 * The pool with Chromium is tested in test/browser/browser-pool.e2e-spec.ts and the capture e2e tests.
 */

class FakePage extends EventEmitter {
  closed = false;
  viewport: { width: number; height: number } = { ...DEFAULT_VIEWPORT };
  media: unknown = null;
  isClosed = () => this.closed;
  setViewportSize = async (size: { width: number; height: number }) => void (this.viewport = size);
  emulateMedia = async (media: unknown) => void (this.media = media);
}

class FakeContext {
  closed = false;
  readonly page = new FakePage();
  constructor(
    readonly browser: FakeBrowser,
    readonly options: Record<string, unknown>,
  ) {}
  newPage = async () => this.page;
  newCDPSession = async () => ({ send: async () => ({}) });
  close = async () => {
    this.closed = true;
    this.page.closed = true;
  };
}

class FakeBrowser extends EventEmitter {
  connected = true;
  closed = false;
  readonly contexts: FakeContext[] = [];
  constructor(readonly request: LaunchRequest) {
    super();
  }
  isConnected = () => this.connected;
  newContext = async (options: Record<string, unknown>) => {
    if (!this.connected) throw new Error('browser.newContext: Target page, context or browser has been closed');
    const context = new FakeContext(this, options);
    this.contexts.push(context);
    return context;
  };
  close = async () => {
    this.closed = true;
    this.disconnect();
  };
  /** What Chromium crashing looks like to Playwright: disconnected, every context gone. */
  crash(): void {
    this.disconnect();
  }
  openContexts = () => this.contexts.filter((c) => !c.closed);
  private disconnect(): void {
    if (!this.connected) return;
    this.connected = false;
    for (const context of this.contexts) void context.close();
    this.emit('disconnected');
  }
}

/** Chromium's refusal where its namespace sandbox cannot start (its first line, as Playwright reports it). */
const NO_SANDBOX = 'browserType.launch: Target page, context or browser has been closed\nNo usable sandbox! ...';

/**
 * A launcher that records the browsers it started and the requests it got; `failNext` makes the next
 * launch fail; `sandboxFails` makes every launch with the sandbox fail as Chromium does without one.
 */
function fakeLauncher() {
  const browsers: FakeBrowser[] = [];
  const requests: LaunchRequest[] = [];
  let failNext = false;
  let sandboxFails = false;
  const launch: BrowserLauncher = async (request) => {
    requests.push(request);
    if (failNext) {
      failNext = false;
      throw new Error('browserType.launch: Executable does not exist at /usr/lib/chromium/chrome');
    }
    if (sandboxFails && request.sandbox) throw new Error(NO_SANDBOX);
    const browser = new FakeBrowser(request);
    browsers.push(browser);
    return browser as unknown as Browser;
  };
  return { launch, browsers, requests, failNextLaunch: () => (failNext = true), failSandbox: () => (sandboxFails = true) };
}

/** A promise with its resolve, to hold a lease's work until the test lets it go. */
function gate<T = void>() {
  let open!: (value: T) => void;
  const opened = new Promise<T>((resolve) => (open = resolve));
  return { open, opened };
}

/** Polls `condition` until it holds, failing after `deadlineMs` (the pool tidies up in the background). */
async function eventually(condition: () => boolean, deadlineMs = 5_000): Promise<void> {
  const until = Date.now() + deadlineMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error(`condition not met within ${deadlineMs} ms: ${condition.toString()}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('BrowserPool (with a fake launcher)', () => {
  let metrics: Metrics;
  let launcher: ReturnType<typeof fakeLauncher>;
  let pool: BrowserPool;

  /** A non-root process on a kernel with unprivileged user namespaces: where the sandbox can work. */
  const sandboxCapable: SandboxProbe = { uid: 1000, read: () => null };

  function makePool(settings: Partial<AppConfig> = {}, probe: SandboxProbe = sandboxCapable): BrowserPool {
    const config = {
      chromiumPath: process.execPath, // any executable file: the fake launcher never runs it
      chromiumSandbox: false,
      captureConcurrency: 2,
      captureWarmContexts: 0,
      captureBrowserRecycleAfter: 500,
      ...settings,
    } as AppConfig;
    const proxy = { start: async () => '127.0.0.1:18080' } as unknown as EgressProxy;
    metrics = new Metrics();
    launcher = fakeLauncher();
    pool = new BrowserPool(config, proxy, metrics, launcher.launch, probe);
    return pool;
  }

  const restarts = async (reason: 'recycle' | 'crash') =>
    (await metrics.browserRestarts.get()).values.find((v) => v.labels.reason === reason)?.value ?? 0;

  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => Logger.overrideLogger(['log', 'error', 'warn']));

  afterEach(async () => {
    jest.restoreAllMocks();
    await pool.onApplicationShutdown();
  });

  it('launches through the launcher with the executable and the egress proxy, and lends a fresh context per lease', async () => {
    makePool();
    const first = await pool.withLease({ budgetMs: 10_000 }, async (lease) => lease.context);
    const second = await pool.withLease({ budgetMs: 10_000 }, async (lease) => lease.context);
    expect(launcher.browsers).toHaveLength(1);
    expect(launcher.browsers[0].request).toEqual({ executablePath: process.execPath, proxyServer: '127.0.0.1:18080', sandbox: false });
    expect(second).not.toBe(first);
    await eventually(() => (first as unknown as FakeContext).closed && (second as unknown as FakeContext).closed);
    expect((first as unknown as FakeContext).options).toMatchObject({ serviceWorkers: 'block', acceptDownloads: false });
  });

  it('keeps at most CAPTURE_CONCURRENCY capture leases running; the others wait their turn in order', async () => {
    makePool({ captureConcurrency: 2 });
    const started: number[] = [];
    const gates = [gate(), gate(), gate(), gate()];
    const leases = gates.map((g, i) =>
      pool.withLease({ budgetMs: 10_000, lane: 'capture' }, async () => {
        started.push(i);
        await g.opened;
        return i;
      }),
    );
    await eventually(() => started.length === 2);
    // A lease without a lane (a run's) does not wait behind them.
    await expect(pool.withLease({ budgetMs: 10_000 }, async () => 'run')).resolves.toBe('run');
    expect(started).toEqual([0, 1]);
    gates[1].open();
    await expect(leases[1]).resolves.toBe(1);
    await eventually(() => started.length === 3);
    expect(started).toEqual([0, 1, 2]);
    gates[0].open();
    gates[2].open();
    await eventually(() => started.length === 4);
    gates[3].open();
    await expect(Promise.all(leases)).resolves.toEqual([0, 1, 2, 3]);
  });

  it('gives a capture lease’s place back when its work fails', async () => {
    makePool({ captureConcurrency: 1 });
    await expect(
      pool.withLease({ budgetMs: 10_000, lane: 'capture' }, async () => Promise.reject(new Error('page failed'))),
    ).rejects.toThrow('page failed');
    await expect(pool.withLease({ budgetMs: 10_000, lane: 'capture' }, async () => 'next')).resolves.toBe('next');
  });

  it('recycles a browser after CAPTURE_BROWSER_RECYCLE_AFTER leases, closing it once its last lease ends', async () => {
    makePool({ captureBrowserRecycleAfter: 2 });
    const hold = gate();
    const long = pool.withLease({ budgetMs: 10_000 }, () => hold.opened);
    await pool.withLease({ budgetMs: 10_000 }, async () => undefined); // the second lease: the browser is retired
    expect(launcher.browsers).toHaveLength(1);
    expect(launcher.browsers[0].closed).toBe(false); // a lease still runs on it
    await pool.withLease({ budgetMs: 10_000 }, async () => undefined);
    expect(launcher.browsers).toHaveLength(2);
    hold.open();
    await long;
    await eventually(() => launcher.browsers[0].closed);
    expect(launcher.browsers[1].closed).toBe(false);
    expect(await restarts('recycle')).toBe(1);
  });

  it('recycles a browser older than BROWSER_MAX_AGE_MS at its next lease', async () => {
    makePool();
    const now = Date.now();
    const clock = jest.spyOn(Date, 'now').mockReturnValue(now);
    await pool.withLease({ budgetMs: 10_000 }, async () => undefined);
    clock.mockReturnValue(now + BROWSER_MAX_AGE_MS - 1);
    await pool.withLease({ budgetMs: 10_000 }, async () => undefined);
    expect(launcher.browsers).toHaveLength(1);
    clock.mockReturnValue(now + BROWSER_MAX_AGE_MS);
    await pool.withLease({ budgetMs: 10_000 }, async () => undefined);
    expect(launcher.browsers).toHaveLength(2);
    clock.mockRestore();
    await eventually(() => launcher.browsers[0].closed);
    expect(await restarts('recycle')).toBe(1);
  });

  it('relaunches a crashed browser and starts the capture again once', async () => {
    makePool();
    let attempts = 0;
    const result = await pool.withLease({ budgetMs: 10_000, crashRetries: 1 }, async () => {
      attempts++;
      if (attempts === 1) {
        launcher.browsers[0].crash();
        throw new Error('page.goto: Target page, context or browser has been closed');
      }
      return 'captured on the second browser';
    });
    expect(result).toBe('captured on the second browser');
    expect(attempts).toBe(2);
    expect(launcher.browsers).toHaveLength(2);
    expect(await restarts('crash')).toBe(1);
  });

  it('gives up after the retries with BrowserGoneError counting the attempts; without retries after one', async () => {
    makePool();
    const crashEveryTime = async () => {
      launcher.browsers[launcher.browsers.length - 1].crash();
      throw new Error('Target page, context or browser has been closed');
    };
    const twice = await pool.withLease({ budgetMs: 10_000, crashRetries: 1 }, crashEveryTime).catch((e: unknown) => e);
    expect(twice).toBeInstanceOf(BrowserGoneError);
    expect((twice as BrowserGoneError).attempts).toBe(2);
    expect(launcher.browsers).toHaveLength(2);
    const once = await pool.withLease({ budgetMs: 10_000 }, crashEveryTime).catch((e: unknown) => e);
    expect(once).toBeInstanceOf(BrowserGoneError);
    expect((once as BrowserGoneError).attempts).toBe(1);
  });

  it('reads a renderer crash of the page (the browser still up) as BrowserGoneError too', async () => {
    makePool();
    const err = await pool
      .withLease({ budgetMs: 10_000 }, async (lease) => {
        (lease.page as unknown as FakePage).emit('crash');
        throw new Error('page.evaluate: Target crashed');
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BrowserGoneError);
    expect((err as Error).message).toBe('the page crashed');
  });

  it('aborts a lease at its budget and closes its context', async () => {
    makePool();
    let leased: Lease | undefined;
    const err = await pool
      .withLease({ budgetMs: 20 }, async (lease) => {
        leased = lease;
        await new Promise((_, reject) => lease.signal.addEventListener('abort', () => reject(new Error('page.goto: aborted'))));
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LeaseBudgetExceededError);
    expect((err as Error).message).toBe('exceeded its time budget of 20 ms');
    await eventually(() => (leased!.context as unknown as FakeContext).closed);
  });

  it('applies viewport and colour scheme to a warm context, and creates a fresh one for options fixed at creation', async () => {
    makePool({ captureWarmContexts: 1 });
    await pool.ensureBrowser();
    await eventually(() => launcher.browsers[0]?.contexts.length === 1);
    const warm = launcher.browsers[0].contexts[0];
    const used = await pool.withLease(
      { budgetMs: 10_000, context: { viewport: { width: 640, height: 400 }, colorScheme: 'dark' } },
      async (lease) => lease.context,
    );
    expect(used).toBe(warm);
    expect(warm.page.viewport).toEqual({ width: 640, height: 400 });
    expect(warm.page.media).toEqual({ colorScheme: 'dark', reducedMotion: undefined });
    const mobile = await pool.withLease(
      { budgetMs: 10_000, context: { isMobile: true, viewport: { width: 390, height: 844 } } },
      async (lease) => lease.context,
    );
    expect((mobile as unknown as FakeContext).options).toMatchObject({ isMobile: true, viewport: { width: 390, height: 844 } });
    expect(mobile).not.toBe(warm);
  });

  it('answers BrowserUnavailableError when the browser cannot be launched, and launches again at the next lease', async () => {
    makePool();
    launcher.failNextLaunch();
    const err = await pool.withLease({ budgetMs: 10_000 }, async () => undefined).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BrowserUnavailableError);
    expect((err as Error).message).toBe('the browser could not be started');
    await expect(pool.withLease({ budgetMs: 10_000 }, async () => 'ok')).resolves.toBe('ok');
  });

  it('on shutdown closes every browser, refuses the leases waiting for their lane and takes no new ones', async () => {
    makePool({ captureConcurrency: 1 });
    const hold = gate();
    const running = pool.withLease({ budgetMs: 10_000, lane: 'capture' }, () => hold.opened);
    const waiting = pool.withLease({ budgetMs: 10_000, lane: 'capture' }, async () => 'never');
    await eventually(() => launcher.browsers.length === 1);
    await pool.onApplicationShutdown();
    await expect(waiting).rejects.toBeInstanceOf(BrowserPoolClosedError);
    expect(launcher.browsers.every((b) => b.closed)).toBe(true);
    await expect(pool.withLease({ budgetMs: 10_000 }, async () => 'late')).rejects.toBeInstanceOf(BrowserPoolClosedError);
    await expect(pool.withLease({ budgetMs: 10_000, lane: 'capture' }, async () => 'late')).rejects.toBeInstanceOf(BrowserPoolClosedError);
    hold.open();
    await running.catch(() => undefined);
    expect(launcher.browsers).toHaveLength(1);
  });

  describe('Chromium’s sandbox (CONTRACT.md "Tenancy: fair share and isolation", "The browser")', () => {
    const sandboxGauge = async () => (await metrics.browserSandbox.get()).values[0]?.value;
    const logs = () => {
      const lines: string[] = [];
      jest.spyOn(Logger.prototype, 'error').mockImplementation((message: unknown) => void lines.push(`error ${String(message)}`));
      jest.spyOn(Logger.prototype, 'warn').mockImplementation((message: unknown) => void lines.push(`warn ${String(message)}`));
      jest.spyOn(Logger.prototype, 'log').mockImplementation((message: unknown) => void lines.push(`log ${String(message)}`));
      return lines;
    };

    it('on, where it can work: launches the first browser with it at the decision, keeps it, gauge 1', async () => {
      makePool({ chromiumSandbox: true });
      const lines = logs();
      expect(await pool.admitsWork()).toBe(true);
      expect(launcher.requests.map((r) => r.sandbox)).toEqual([true]);
      await pool.withLease({ budgetMs: 10_000 }, async () => undefined);
      await pool.ensureBrowser();
      expect(launcher.browsers).toHaveLength(1);
      expect(await sandboxGauge()).toBe(1);
      expect(lines).toEqual(['log Chromium runs with its sandbox']);
    });

    it('on, as root: takes no work, launches nothing (not even without the sandbox), says why and how to fix it in one line', async () => {
      makePool({ chromiumSandbox: true }, { uid: 0, read: () => null });
      const lines = logs();
      expect(await pool.admitsWork()).toBe(false);
      await expect(pool.ensureBrowser()).rejects.toThrow(BrowserUnavailableError);
      await expect(pool.withLease({ budgetMs: 10_000 }, async () => undefined)).rejects.toThrow(BrowserUnavailableError);
      expect(launcher.requests).toEqual([]);
      expect(await sandboxGauge()).toBe(0);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^error Chromium's sandbox cannot start \(the process runs as root\).*non-root.*CHROMIUM_SANDBOX=off/);
    });

    it('on, when the sandboxed launch fails: never falls back to a launch without it, and readiness does not say why', async () => {
      makePool({ chromiumSandbox: true });
      launcher.failSandbox();
      const lines = logs();
      expect(await pool.admitsWork()).toBe(false);
      const readiness = await pool.ensureBrowser().catch((err: Error) => err);
      expect(readiness).toBeInstanceOf(BrowserUnavailableError);
      expect((readiness as Error).message).not.toMatch(/sandbox/i);
      await expect(pool.withLease({ budgetMs: 10_000 }, async () => undefined)).rejects.toThrow(BrowserUnavailableError);
      expect(launcher.requests.map((r) => r.sandbox)).toEqual([true]);
      expect(await sandboxGauge()).toBe(0);
      expect(lines.filter((l) => l.startsWith('error Chromium'))).toEqual([
        expect.stringMatching(
          /^error Chromium's sandbox cannot start \(a sandboxed launch failed: browserType\.launch: Target page.*\), so this worker takes no captures or runs/,
        ),
      ]);
    });

    it('off: launches without it even where it could work, warns once at the decision, gauge 0', async () => {
      makePool({ chromiumSandbox: false });
      const lines = logs();
      expect(await pool.admitsWork()).toBe(true);
      expect(await pool.admitsWork()).toBe(true);
      expect(launcher.requests).toEqual([]);
      await pool.withLease({ budgetMs: 10_000 }, async () => undefined);
      expect(launcher.requests.map((r) => r.sandbox)).toEqual([false]);
      expect(await sandboxGauge()).toBe(0);
      expect(lines).toEqual([expect.stringMatching(/^warn CHROMIUM_SANDBOX=off: Chromium runs WITHOUT its sandbox/)]);
    });
  });
});
