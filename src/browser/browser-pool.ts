import { Inject, Injectable, Logger, OnApplicationShutdown, Optional } from '@nestjs/common';
import type { Browser, BrowserContext, BrowserContextOptions, CDPSession, Page } from 'playwright';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { EgressProxy } from '../egress/egress-proxy';
import { Metrics } from '../metrics/metrics';
import { BrowserGoneError, BrowserPoolClosedError, BrowserUnavailableError, LeaseBudgetExceededError } from './browser-errors';
import { SANDBOX_PROBE, SandboxProbe, sandboxSupport, systemProbe } from './browser-sandbox';
import { resolveChromiumExecutable } from './chromium-executable';
import { BROWSER_LAUNCHER, BrowserLauncher, launchChromium } from './chromium-launch';

/** Viewport of pre-created (warm) pages until a lease sets its own, CSS px. */
export const DEFAULT_VIEWPORT = { width: 1280, height: 800 } as const;

/**
 * How long after the last running lease ends its context is closed and the warm pool topped up, ms.
 * Tearing a renderer down and starting another takes both cores of a small machine for a moment; what
 * the caller does right after its lease (storing the file and completing the job: about 20 ms) would
 * run beside it and take twice as long. Waiting this long took the idle latency of `npm run bench`
 * (docs/performance.md) from about 137 ms to 110 ms. A lease that ends beside others is tidied at
 * once: deferring it there too lowered the race's throughput.
 */
export const LEASE_END_SETTLE_MS = 50;

/**
 * Age after which a browser takes no new leases and is replaced (closed once its last lease ends), ms:
 * a long-lived Chromium grows (caches, fragmented memory) even when each context is closed, and a
 * browser leased less often than `CAPTURE_BROWSER_RECYCLE_AFTER` would otherwise live for weeks.
 */
export const BROWSER_MAX_AGE_MS = 60 * 60_000;

/**
 * Leases that share a concurrency limit: `capture` leases wait until fewer than `CAPTURE_CONCURRENCY`
 * run (docs/capture-engine.md, "Robustness"). Leases without a lane (a run's: `RUN_CONCURRENCY`
 * limits those through its queue) never wait.
 */
export type LeaseLane = 'capture';

/**
 * Context-creation parameters a lease may ask for (Playwright's names and units). `viewport`,
 * `colorScheme` and `reducedMotion` can be applied to a pre-created page (`setViewportSize`,
 * `emulateMedia`), so a lease that sets only those still gets a warm context; any other field makes the
 * pool create a fresh context with exactly these options (about 100-150 ms more on a 2-core machine),
 * because Chromium fixes them when the context is created (`isMobile`, `deviceScaleFactor`, …).
 */
export type ContextOptions = Pick<
  BrowserContextOptions,
  | 'viewport'
  | 'colorScheme'
  | 'reducedMotion'
  | 'deviceScaleFactor'
  | 'isMobile'
  | 'hasTouch'
  | 'userAgent'
  | 'locale'
  | 'timezoneId'
  | 'extraHTTPHeaders'
  | 'javaScriptEnabled'
  | 'storageState'
>;

/** Context options a warm page can take after creation. */
const APPLIED_AFTER_CREATION = new Set<keyof ContextOptions>(['viewport', 'colorScheme', 'reducedMotion']);

/** What a lease needs. Times in ms. */
export interface LeaseOptions {
  /** Longest the lease may last: then `signal` aborts and, `graceMs` later, the context is closed. */
  budgetMs: number;
  /** Time between the budget's end and the context's closing, for finalization (a run's video); default 0. */
  graceMs?: number;
  /** Context-creation parameters; see {@link ContextOptions} for which ones cost a fresh context. */
  context?: ContextOptions;
  /**
   * How often the work is started again on a new browser when the browser or the page's renderer
   * crashes (default 0). Only for work that is safe to repeat (a capture; not a run with side effects).
   */
  crashRetries?: number;
  /** The concurrency limit the lease waits for, if any (see {@link LeaseLane}). */
  lane?: LeaseLane;
  /**
   * An `EGRESS_PROXIES` id (the `proxy` option, CONTRACT.md "Capture options, second set"): the
   * context's requests go to the egress proxy's listener for that upstream (still through the SSRF
   * guard), so the lease gets a fresh context. An id the configuration lacks rejects with the egress
   * proxy's `UpstreamProxyError`.
   */
  upstreamProxy?: string | null;
}

/** A fresh browser context with one page, used by exactly one piece of work and closed after it. */
export interface Lease {
  readonly context: BrowserContext;
  readonly page: Page;
  /** A DevTools session on `page` (screenshots, screencast, emulation). */
  readonly cdp: CDPSession;
  /** Aborted when the lease's budget runs out. */
  readonly signal: AbortSignal;
}

interface PageSet {
  context: BrowserContext;
  page: Page;
  cdp: CDPSession;
}

/** One launched browser and its bookkeeping. */
interface BrowserSlot {
  browser: Browser;
  /** When it was launched, epoch ms. */
  launchedAt: number;
  /** Leases started on this browser. */
  leases: number;
  inFlight: number;
  /** No new leases; closed once `inFlight` is 0. */
  retired: boolean;
  /** Fresh default contexts created ahead of demand, each used by exactly one lease. */
  warm: Promise<PageSet>[];
}

/**
 * The browser pool (ARCHITECTURE.md, browser/): launches the system Chromium (`CHROMIUM_PATH`, see
 * {@link resolveChromiumExecutable}) with every request, loopback included, sent through the
 * {@link EgressProxy}, and lends fresh contexts through {@link withLease}.
 *
 * - Isolation: every lease gets its own fresh browser context (cookies, storage, HTTP cache and
 *   permissions are per context; service workers are blocked), closed when the work ends. To hide the
 *   cost of creating a context and page (a renderer start, 100-150 ms), `CAPTURE_WARM_CONTEXTS` default
 *   contexts are created ahead of demand; each is still used once only. The pool is topped up when a
 *   lease ends (or when a lease empties it), so no renderer starts beside an idle capture's navigation.
 * - Robustness: a browser that crashes or disconnects is replaced (and the work started again when the
 *   lease allows it); a browser is retired after `CAPTURE_BROWSER_RECYCLE_AFTER` leases or
 *   {@link BROWSER_MAX_AGE_MS} and closed when its last lease ends; each lease has a time budget after
 *   which its context is closed.
 * - Concurrency: leases of a {@link LeaseLane} wait for their turn.
 * - Sandbox: with `CHROMIUM_SANDBOX=on` (the default) every browser is launched with Chromium's
 *   sandbox and never without it; a process where it cannot start takes no browser work (see
 *   {@link admitsWork}). With `off` every browser runs without it.
 * - Launching goes through a {@link BrowserLauncher} ({@link launchChromium} by default), so the pool's
 *   own rules are tested with a fake one (src/browser/browser-pool.spec.ts).
 * - Shutdown closes every browser: no Chromium process is left.
 */
@Injectable()
export class BrowserPool implements OnApplicationShutdown {
  private readonly logger = new Logger(BrowserPool.name);
  private current: Promise<BrowserSlot> | null = null;
  /** What `current` resolved to, once it has. */
  private currentSlot: BrowserSlot | null = null;
  private readonly slots = new Set<BrowserSlot>();
  private closing = false;
  private executable: string | null = null;
  /** Whether this process takes browser work, decided once by {@link admitsWork}. */
  private admission: Promise<boolean> | null = null;
  /** Why this process takes no browser work (the sandbox is required and cannot start), else null. */
  private refusal: string | null = null;
  /** Leases running and waiting per lane. */
  private readonly lanes = new Map<LeaseLane, { running: number; waiting: { admit: () => void; refuse: (err: Error) => void }[] }>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly proxy: EgressProxy,
    private readonly metrics: Metrics,
    /** How browsers are started: {@link launchChromium} unless a test provides its own. */
    @Optional() @Inject(BROWSER_LAUNCHER) private readonly launcher: BrowserLauncher = launchChromium,
    /** What says whether the sandbox can work here: this process's uid and `/proc/sys` unless a test provides its own. */
    @Optional() @Inject(SANDBOX_PROBE) private readonly probe: SandboxProbe = systemProbe,
  ) {}

  /**
   * Whether this process may take captures and runs (CONTRACT.md "Tenancy: fair share and isolation",
   * "The browser"; docs/security.md), decided once, at start, by the queue processors before they
   * take any job. With `CHROMIUM_SANDBOX=on` (the default): false when the sandbox cannot work here
   * ({@link sandboxSupport}: root, no unprivileged user namespaces) or the first browser, launched
   * now with the sandbox, fails to start; true once it runs (it stays the pool's browser). With `off`:
   * true, nothing launched. Logs one line at the decision: an error saying why and how to fix it, a
   * warning for `off`; sets `glimpse_browser_sandbox` (1: sandboxed browsers run). Throws
   * {@link BrowserUnavailableError} when no browser executable exists at all (the processors' boot
   * fails, as before).
   */
  admitsWork(): Promise<boolean> {
    this.admission ??= this.decideAdmission();
    return this.admission;
  }

  /**
   * Readiness (CONTRACT.md, "Health and readiness"): resolves when a browser is running or one can be
   * launched now (launching it, as the next capture would); rejects with the reason otherwise, and
   * when this process takes no browser work ({@link admitsWork}: the message does not say why, the
   * start-up log does).
   */
  async ensureBrowser(): Promise<void> {
    if (!(await this.admitsWork())) throw new BrowserUnavailableError('this worker takes no captures or runs (see its start-up log)');
    const slot = await this.slot();
    if (!slot.browser.isConnected()) throw new BrowserGoneError('the browser is not connected');
  }

  /** The browser executable this pool launches. Throws {@link BrowserUnavailableError} when there is none. */
  executablePath(): string {
    this.executable ??= resolveChromiumExecutable(this.config.chromiumPath);
    return this.executable;
  }

  /**
   * Runs `work` with a fresh context and page, then closes the context and tops the warm pool up (in
   * the background, {@link LEASE_END_SETTLE_MS} later when no other lease runs: a result is ready as
   * soon as `work` resolves). A lease with a `lane` first waits its turn (see {@link LeaseLane}), and
   * keeps it through its crash retries. Throws what `work` throws, except:
   * {@link LeaseBudgetExceededError} when the budget ran out, {@link BrowserGoneError} when the
   * browser or the page's renderer crashed (after `crashRetries` further attempts), and
   * {@link BrowserUnavailableError} / {@link BrowserPoolClosedError} when no browser can be had.
   */
  async withLease<T>(options: LeaseOptions, work: (lease: Lease) => Promise<T>): Promise<T> {
    const leave = options.lane ? await this.enterLane(options.lane) : () => undefined;
    try {
      const retries = options.crashRetries ?? 0;
      for (let attempt = 0; ; attempt++) {
        try {
          return await this.attempt(options, work);
        } catch (err) {
          if (!(err instanceof BrowserGoneError) || attempt >= retries || this.closing) {
            if (err instanceof BrowserGoneError) err.attempts = attempt + 1;
            throw err;
          }
          this.logger.warn(`${err.message}; starting the work again on a new browser`);
        }
      }
    } finally {
      leave();
    }
  }

  /**
   * Closes every browser (no Chromium process is left) and refuses the leases still waiting for their
   * lane with {@link BrowserPoolClosedError}.
   */
  async onApplicationShutdown(): Promise<void> {
    this.closing = true;
    this.current = null;
    for (const lane of this.lanes.values()) for (const waiter of lane.waiting.splice(0)) waiter.refuse(new BrowserPoolClosedError());
    await Promise.all([...this.slots].map((slot) => this.closeSlot(slot)));
  }

  /** Waits until `lane` has room, takes a place in it, and returns the function that gives it back. */
  private async enterLane(name: LeaseLane): Promise<() => void> {
    if (this.closing) throw new BrowserPoolClosedError();
    let lane = this.lanes.get(name);
    if (!lane) this.lanes.set(name, (lane = { running: 0, waiting: [] }));
    const limit = this.config.captureConcurrency;
    if (lane.running < limit) lane.running++;
    else await new Promise<void>((admit, refuse) => lane.waiting.push({ admit, refuse }));
    let left = false;
    return () => {
      if (left) return;
      left = true;
      const next = lane.waiting.shift();
      if (next) next.admit();
      else lane.running--;
    };
  }

  private async attempt<T>(options: LeaseOptions, work: (lease: Lease) => Promise<T>): Promise<T> {
    let slot = await this.slot();
    if (!slot.retired && Date.now() - slot.launchedAt >= BROWSER_MAX_AGE_MS) this.retire(slot, 'recycle');
    if (slot.retired) slot = await this.slot();
    slot.inFlight++;
    slot.leases++;
    if (slot.leases >= this.config.captureBrowserRecycleAfter) this.retire(slot, 'recycle');
    const expiry = new AbortController();
    let set: PageSet | undefined;
    let budgetTimer: NodeJS.Timeout | undefined;
    let closeTimer: NodeJS.Timeout | undefined;
    let crashed = false;
    try {
      set = await this.take(slot, options.context, options.upstreamProxy);
      const leased = set;
      leased.page.once('crash', () => (crashed = true));
      budgetTimer = setTimeout(() => {
        expiry.abort(new LeaseBudgetExceededError(options.budgetMs));
        closeTimer = setTimeout(() => void leased.context.close().catch(() => undefined), options.graceMs ?? 0);
      }, options.budgetMs);
      return await work({ ...leased, signal: expiry.signal });
    } catch (err) {
      if (!slot.browser.isConnected()) {
        this.retire(slot, 'crash');
        throw new BrowserGoneError('the browser crashed');
      }
      if (expiry.signal.aborted) throw new LeaseBudgetExceededError(options.budgetMs);
      if (crashed) throw new BrowserGoneError('the page crashed');
      throw err;
    } finally {
      clearTimeout(budgetTimer);
      clearTimeout(closeTimer);
      slot.inFlight--;
      const ended = set;
      const tidy = () => {
        void ended?.context.close().catch(() => undefined);
        this.refill(slot);
      };
      // Alone on the browser, the caller's next steps go first; beside other leases (a busy worker) at
      // once, so the warm pool keeps up with them.
      if (slot.inFlight === 0) setTimeout(tidy, LEASE_END_SETTLE_MS).unref();
      else tidy();
      if (slot.retired && slot.inFlight === 0) void this.closeSlot(slot);
    }
  }

  /** The browser new leases run on, launching one when there is none or the last was retired. */
  private slot(): Promise<BrowserSlot> {
    if (this.closing) return Promise.reject(new BrowserPoolClosedError());
    // Fail closed: a process whose sandbox could not start launches no browser at all.
    if (this.refusal) return Promise.reject(new BrowserUnavailableError('the browser could not be started'));
    if (this.currentSlot?.retired) {
      this.current = null;
      this.currentSlot = null;
    }
    if (!this.current) {
      const launching = this.launch();
      this.current = launching;
      launching.then(
        (slot) => {
          if (this.current === launching) this.currentSlot = slot;
        },
        () => {
          if (this.current === launching) this.current = null;
        },
      );
    }
    return this.current;
  }

  /** See {@link admitsWork}. */
  private async decideAdmission(): Promise<boolean> {
    this.executablePath();
    if (!this.config.chromiumSandbox) {
      this.metrics.browserSandbox.set(0);
      this.logger.warn(
        "CHROMIUM_SANDBOX=off: Chromium runs WITHOUT its sandbox, so an exploit in a captured page runs as this worker's user with its network access (docs/security.md)",
      );
      return true;
    }
    const support = sandboxSupport(this.probe);
    let refusal = support.possible ? null : support.reason;
    if (!refusal) {
      try {
        await this.slot();
      } catch (err) {
        if (err instanceof BrowserPoolClosedError) return false;
        refusal = `a sandboxed launch failed: ${firstLine((err as Error).cause ?? err)}`;
      }
    }
    if (refusal) {
      this.refusal = refusal;
      this.metrics.browserSandbox.set(0);
      this.logger.error(
        `Chromium's sandbox cannot start (${refusal}), so this worker takes no captures or runs: run it as a non-root user on a kernel that allows unprivileged user namespaces (docs/operations.md, "Chromium's sandbox"), or set CHROMIUM_SANDBOX=off to run Chromium without its sandbox`,
      );
      return false;
    }
    this.metrics.browserSandbox.set(1);
    this.logger.log('Chromium runs with its sandbox');
    return true;
  }

  private async launch(): Promise<BrowserSlot> {
    const executablePath = this.executablePath();
    const proxy = await this.proxy.start();
    // With CHROMIUM_SANDBOX=on, only with the sandbox: a launch that fails is not retried without it.
    let browser: Browser;
    try {
      browser = await this.launcher({ executablePath, proxyServer: proxy, sandbox: this.config.chromiumSandbox });
    } catch (err) {
      this.logger.error(`Could not launch ${executablePath}: ${(err as Error).message}`);
      throw new BrowserUnavailableError('the browser could not be started', { cause: err });
    }
    const slot: BrowserSlot = { browser, launchedAt: Date.now(), leases: 0, inFlight: 0, retired: false, warm: [] };
    this.slots.add(slot);
    this.metrics.browsersRunning.set(this.slots.size);
    browser.on('disconnected', () => {
      this.retire(slot, 'crash');
      this.slots.delete(slot);
      this.metrics.browsersRunning.set(this.slots.size);
    });
    if (this.closing) {
      await this.closeSlot(slot);
      throw new BrowserPoolClosedError();
    }
    this.refill(slot);
    return slot;
  }

  /**
   * A fresh context and page for `options`: a warm one when the options allow it (see
   * {@link ContextOptions}), else a new one created with them; then tops the warm pool up.
   */
  private async take(slot: BrowserSlot, options: ContextOptions = {}, upstreamProxy?: string | null): Promise<PageSet> {
    if (upstreamProxy) {
      const proxy = { server: `http://${await this.proxy.start(upstreamProxy)}` };
      return this.newPageSet(slot.browser, { viewport: DEFAULT_VIEWPORT, ...options, proxy });
    }
    const own = Object.entries(options).some(
      ([key, value]) => value !== undefined && !APPLIED_AFTER_CREATION.has(key as keyof ContextOptions),
    );
    if (own) return this.newPageSet(slot.browser, { viewport: DEFAULT_VIEWPORT, ...options });
    const warm = slot.warm.shift();
    // Creating a context starts a renderer: done now it competes with this lease's navigation for
    // the CPU, so the pool is topped up when the lease ends, or now only once it is empty.
    if (!slot.warm.length) this.refill(slot);
    let set = warm ? await warm.catch(() => null) : null;
    if (!set || set.page.isClosed()) set = await this.newPageSet(slot.browser, {});
    const { viewport, colorScheme, reducedMotion } = options;
    if (viewport && (viewport.width !== DEFAULT_VIEWPORT.width || viewport.height !== DEFAULT_VIEWPORT.height)) {
      await set.page.setViewportSize(viewport);
    }
    if (colorScheme !== undefined || reducedMotion !== undefined) await set.page.emulateMedia({ colorScheme, reducedMotion });
    return set;
  }

  private refill(slot: BrowserSlot): void {
    while (!slot.retired && !this.closing && slot.browser.isConnected() && slot.warm.length < this.config.captureWarmContexts) {
      const set = this.newPageSet(slot.browser, {});
      set.catch(() => undefined);
      slot.warm.push(set);
    }
  }

  private async newPageSet(browser: Browser, options: ContextOptions & Pick<BrowserContextOptions, 'proxy'>): Promise<PageSet> {
    const context = await browser.newContext({
      viewport: DEFAULT_VIEWPORT,
      ...options,
      serviceWorkers: 'block',
      acceptDownloads: false,
    });
    try {
      const page = await context.newPage();
      const cdp = await context.newCDPSession(page);
      return { context, page, cdp };
    } catch (err) {
      await context.close().catch(() => undefined);
      throw err;
    }
  }

  /**
   * Stops giving new leases to `slot`; it is closed when its last lease ends, and the next lease
   * launches a new browser (counted in `glimpse_browser_restarts_total` by `reason`).
   */
  private retire(slot: BrowserSlot, reason: 'recycle' | 'crash'): void {
    if (slot.retired) return;
    slot.retired = true;
    if (!this.closing) this.metrics.browserRestarts.inc({ reason });
    if (this.currentSlot === slot) {
      this.current = null;
      this.currentSlot = null;
    }
    const warm = slot.warm.splice(0);
    for (const set of warm)
      void set.then(
        (s) => s.context.close().catch(() => undefined),
        () => undefined,
      );
    if (slot.inFlight === 0) void this.closeSlot(slot);
  }

  private async closeSlot(slot: BrowserSlot): Promise<void> {
    slot.retired = true;
    this.slots.delete(slot);
    this.metrics.browsersRunning.set(this.slots.size);
    const warm = slot.warm.splice(0);
    await Promise.all(
      warm.map((set) =>
        set
          .then(
            (s) => s.context.close(),
            () => undefined,
          )
          .catch(() => undefined),
      ),
    );
    await slot.browser.close().catch(() => undefined);
  }
}

/** The first line of an error's message (Playwright's launch errors carry Chromium's whole log). */
function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0];
}
