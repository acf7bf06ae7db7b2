import { InjectQueue } from '@nestjs/bull';
import { Inject, Injectable } from '@nestjs/common';
import type { Job, Queue } from 'bull';
import { BrowserGoneError, BrowserPoolClosedError } from '../browser/browser-errors';
import { BrowserPool } from '../browser/browser-pool';
import { SessionSetup, sessionContextOptions } from '../capture/session-options';
import { Clock } from '../common/clock';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { EgressProxy } from '../egress/egress-proxy';
import { RUN_JOB, RUN_QUEUE, RunPayload } from '../queue/queues';
import { PeriodicJob, WorkProcessor } from '../queue/queue-processor';
import { WorkEndWaiter } from '../queue/work-ended';
import { ResultFilesService } from '../storage/result-files.service';
import { RunFailure, runSession, RunSessionOutcome } from './run-session';
import { RunEnding, RunLifecycle, skippedSteps } from './run-lifecycle';
import { withSecrets } from './run-steps';
import { openRunValues } from './sealed-run-values';
import { SecretCipher } from '../common/secret-cipher';
import { ProfileSaveError, ProfilesService } from '../profiles/profiles.service';
import type { StorageState } from '../profiles/storage-state';
import { Run } from './run.entity';
import { MAX_RUN_YIELDS } from './run-work';

/** Queue job name of the run sweep (a repeatable job: one worker runs it per interval). */
export const RUN_SWEEP_JOB = 'run-sweep';
/** How often the run sweep runs, ms (CONTRACT.md, "Rate limits and back-pressure", Durability). */
export const RUN_SWEEP_INTERVAL_MS = 30_000;
/** Beyond its budget, the time a `running` run may take to finalize before the run sweep ends it, ms. */
const FINALIZE_SLACK_MS = 180_000;
/** Time after the budget for stopping the video and reading the final page, before the context closes, ms (the Helm chart's KEDA cooldown counts it). */
export const RUN_LEASE_GRACE_MS = 60_000;
/** Runs whose files are deleted at most per sweep (a backlog is worked off over several sweeps). */
const PURGE_BATCH = 200;
/**
 * How often a running run reads whether it was canceled while the `LISTEN` connection that announces
 * cancels is down (and tries to reopen it), ms; while it is up, nothing is read (docs/runs.md, "Cancel").
 */
export const CANCEL_SAFETY_POLL_MS = 10_000;
/** Longest a shutdown waits for interrupted runs to store what they recorded, ms. */
const SHUTDOWN_WAIT_MS = 45_000;

/**
 * Thrown by a run's queue entry that gives its turn to another account's run: Bull retries the entry
 * after its fixed back-off (`RUN_YIELD_DELAY_MS`, src/runs/run-work.ts), so it stays a live entry
 * holding its run's sealed values. No stack: Bull stores the reason on the entry.
 */
export class RunTurnGiven extends Error {
  constructor() {
    super('another account has a run to claim first');
    this.stack = this.message;
  }
}

/** The session options could not be applied to the leased context (a cookie Chromium refuses); customer-safe message. */
class SessionSetupError extends Error {}

/**
 * Runs browser sessions from the `runs` queue ({@link WorkProcessor}: claim, work, finish, retry),
 * `RUN_CONCURRENCY` at once per worker (separate from `CAPTURE_CONCURRENCY`, so runs never starve
 * captures): claims the run (`pending` → `running`), leases a fresh context from the
 * {@link BrowserPool} (every request through the egress proxy and its SSRF guard), runs
 * {@link runSession}, stores the video and ends the run through {@link RunLifecycle.finish}
 * (`run.completed` / `run.failed`).
 *
 * Never stuck `running`: a run redelivered after its worker died is ended `failed` (stage
 * `worker`), never run twice; the run sweep (every 30 s, and at start) ends `running` runs far past
 * their budget, and the reconciler (`DurableQueueService`) re-queues `pending` runs whose queue
 * entry was lost (see `RunWork`). On shutdown, running sessions are interrupted and end `failed`
 * (stage `worker`) with what they recorded.
 */
@Injectable()
export class RunProcessor extends WorkProcessor<RunPayload, RunPayload, Run, RunEnding> {
  protected readonly jobName = RUN_JOB;

  constructor(
    @InjectQueue(RUN_QUEUE) protected readonly queue: Queue<RunPayload>,
    private readonly lifecycle: RunLifecycle,
    private readonly pool: BrowserPool,
    private readonly proxy: EgressProxy,
    private readonly files: ResultFilesService,
    private readonly session: SessionSetup,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly cipher: SecretCipher,
    private readonly notifications: WorkEndWaiter,
    private readonly profiles: ProfilesService,
  ) {
    super();
  }

  /**
   * Starts (run handler and run sweep) only where the browser pool admits work
   * (`BrowserPool.admitsWork`: Chromium's sandbox, CONTRACT.md "Tenancy: fair share and isolation",
   * "The browser"). A refused worker registers no handler on the runs queue at all: Bull gives a
   * worker with any handler on a queue every kind of job of it, and fails those it has no handler
   * for; so its runs stay `pending` for another worker, which also runs the sweep.
   */
  override async onApplicationBootstrap(): Promise<void> {
    if (this.runProcessors && !(await this.pool.admitsWork())) return;
    super.onApplicationBootstrap();
  }

  protected concurrency(): number {
    return this.config.runConcurrency;
  }

  protected shutdownWaitMs(): number {
    return SHUTDOWN_WAIT_MS;
  }

  protected inputOf(payload: RunPayload): RunPayload {
    return payload;
  }

  protected idOf(payload: RunPayload): string {
    return payload.runId;
  }

  protected override periodicJobs(): PeriodicJob[] {
    return [{ jobName: RUN_SWEEP_JOB, everyMs: RUN_SWEEP_INTERVAL_MS, run: () => this.sweep(), atStart: true }];
  }

  /**
   * Fair share across accounts (CONTRACT.md, "Tenancy: fair share and isolation"; docs/durability.md,
   * "Fair share"): an entry claims only its own run (it alone holds that run's sealed values), so
   * before the claim it gives its turn when another account with a `pending` run was served less
   * recently ({@link RunLifecycle.otherAccountsFirst}): it throws {@link RunTurnGiven} and Bull takes
   * it again after `RUN_YIELD_DELAY_MS`, behind the entries queued meanwhile. An entry gives its turn
   * at most `MAX_RUN_YIELDS` times (its Bull `attempts` less one; an entry queued without them never),
   * then claims anyway. Any other failure is not retried by Bull (`job.discard()`), as before.
   */
  protected override async handle(job: Job<RunPayload>): Promise<void> {
    try {
      const mayYield = job.attemptsMade < Math.min(MAX_RUN_YIELDS, (job.opts.attempts ?? 1) - 1);
      if (mayYield && (await this.write(`turn ${job.data.runId}`, () => this.lifecycle.otherAccountsFirst(job.data.runId)))) {
        throw new RunTurnGiven();
      }
      await this.process(job.data);
    } catch (err) {
      if (!(err instanceof RunTurnGiven)) job.discard();
      throw err;
    }
  }

  protected claim(payload: RunPayload): Promise<Run | null> {
    return this.lifecycle.claim(payload.runId);
  }

  /** Runs the session; never throws for anything the page or the browser does (it becomes the ending). */
  protected async work(run: Run, payload: RunPayload): Promise<RunEnding> {
    const abort = new AbortController();
    // Shutdown interrupts the session: it ends `failed` at stage `worker` with what it recorded.
    const onStopping = () => abort.abort('worker');
    if (this.stopping.signal.aborted) onStopping();
    this.stopping.signal.addEventListener('abort', onStopping);
    // A cancel is announced on LISTEN/NOTIFY; the row is read only when one may have been missed (at
    // the start, when the connection opened or broke) and, while the connection is down, every
    // CANCEL_SAFETY_POLL_MS.
    const readCancel = () =>
      void this.lifecycle.cancelRequested(run.id).then(
        (requested) => requested && abort.abort('canceled'),
        () => undefined,
      );
    const cancelWatch = this.notifications.watchCancel(run.id, (heard) => (heard ? abort.abort('canceled') : readCancel()));
    readCancel();
    const safetyPoll = setInterval(() => cancelWatch.listening() || readCancel(), CANCEL_SAFETY_POLL_MS);
    try {
      const sensitiveValues = openRunValues(this.cipher, payload);
      const { profile } = run.options;
      const storageState = profile
        ? await this.write(`read the profile of ${run.id}`, () => this.profiles.stateFor(run.accountId, profile))
        : null;
      if (profile && !storageState) throw new SessionSetupError(`profile ${profile} no longer exists`);
      // The state the session ends with, read before the context closes, for `saveProfile`.
      let finalState: StorageState | null = null;
      const outcome = await this.pool.withLease(
        {
          budgetMs: run.timeoutMs + this.config.captureTimeoutMs,
          graceMs: RUN_LEASE_GRACE_MS,
          context: { ...sessionContextOptions(run.options), ...(storageState ? { storageState } : {}) },
          upstreamProxy: run.options.proxy,
        },
        async (lease) => {
          await this.session.apply(lease, run.options, run.url).catch((err: Error) => {
            throw new SessionSetupError(`cookies could not be set: ${err.message.split('\n')[0].replace(/^[a-zA-Z.]+: /, '')}`);
          });
          const ended = await runSession(
            lease.page,
            {
              url: run.url,
              steps: withSecrets(run.steps, sensitiveValues),
              timeoutMs: run.timeoutMs,
              navigationTimeoutMs: this.config.captureTimeoutMs,
              video: run.video ? { ffmpegPath: this.config.ffmpegPath, width: run.options.width, height: run.options.height } : null,
              sensitiveValues: Object.values(sensitiveValues),
              imageCap: { deviceScale: run.options.scale, maxPixels: this.config.maxImagePixels },
            },
            {
              signal: abort.signal,
              saveScreenshot: (image, format) => this.files.save(image, format),
              onProgress: (steps) => this.lifecycle.progress(run.id, steps),
              egress: this.proxy,
            },
          );
          if (run.saveProfile && !ended.failure) finalState = await lease.context.storageState().catch(() => null);
          return ended;
        },
      );
      return await this.finalize(run, outcome, finalState);
    } catch (err) {
      return this.browserFailure(run, err);
    } finally {
      clearInterval(safetyPoll);
      cancelWatch.stop();
      this.stopping.signal.removeEventListener('abort', onStopping);
    }
  }

  protected finish(run: Run, ending: RunEnding): Promise<Run | null> {
    return this.lifecycle.finish(run.id, ending, ['running']);
  }

  /** A run whose queue job stalled more often than Bull allows (its workers died) ends `failed` at stage `worker`. */
  protected override abandon(payload: RunPayload): Promise<Run | null> {
    return this.lifecycle.failStranded(payload.runId);
  }

  /**
   * Stores the video (the screenshots are stored as they are taken) and decides how the run ends; a
   * run that would complete with `saveProfile` first stores `finalState` into its profile
   * (CONTRACT.md, "Browser profiles": recording a login), and fails at stage `finalize` when that
   * cannot be done (state unreadable, profile deleted, plan limit, over 1 MiB).
   */
  private async finalize(run: Run, outcome: RunSessionOutcome, finalState: StorageState | null): Promise<RunEnding> {
    let videoFile: string | null = null;
    let finalizeError: string | null = null;
    if (outcome.video) {
      try {
        videoFile = await this.files.saveFile(outcome.video.path, 'webm');
      } catch (err) {
        this.logger.error(`Could not store the video of ${run.id}`, (err as Error).stack);
        finalizeError = 'the video could not be stored';
      } finally {
        await outcome.video.dispose();
      }
    } else if (run.video) {
      this.logger.warn(`No video for ${run.id}: ${outcome.videoError ?? 'unknown reason'}`);
      finalizeError = 'the video could not be encoded';
    }
    const artifacts = {
      finalUrl: outcome.finalUrl,
      pageTitle: outcome.pageTitle,
      videoFile,
      consoleErrorCount: outcome.consoleErrorCount,
      networkErrorCount: outcome.networkErrorCount,
      consoleErrors: outcome.consoleErrors,
      networkErrors: outcome.networkErrors,
      stepResults: outcome.steps,
    };
    if (run.saveProfile && !outcome.failure && !finalizeError) {
      const saved = await this.saveProfile(run, finalState);
      if ('error' in saved) finalizeError = saved.error;
      else Object.assign(artifacts, { savedProfileId: saved.profileId });
    }
    const failure: RunFailure | null =
      outcome.failure ?? (finalizeError ? { stage: 'finalize', stepIndex: null, message: finalizeError } : null);
    if (!failure) return { status: 'completed', ...artifacts };
    return {
      status: 'failed',
      ...artifacts,
      finalizationError: failure.message,
      failure: { stage: failure.stage, stepIndex: failure.stepIndex },
    };
  }

  /** Stores a completed session's state into the run's `saveProfile`: the profile's id, or the customer-safe reason it was not stored. */
  private async saveProfile(run: Run, state: StorageState | null): Promise<{ profileId: string } | { error: string }> {
    const target = run.saveProfile;
    if (!target) return { error: 'no profile to save into' };
    if (!state) return { error: 'the browser state could not be read for saveProfile' };
    try {
      return { profileId: await this.write(`save the profile of ${run.id}`, () => this.profiles.saveState(run.accountId, target, state)) };
    } catch (err) {
      if (err instanceof ProfileSaveError) return { error: `saveProfile: ${err.message}` };
      throw err;
    }
  }

  /** How a run ends when no session could be had or the browser went away under it. */
  private browserFailure(run: Run, err: unknown): RunEnding {
    const stepResults = skippedSteps(run.steps);
    if (err instanceof SessionSetupError) {
      return { status: 'failed', finalizationError: err.message, failure: { stage: 'step', stepIndex: null }, stepResults };
    }
    if (err instanceof BrowserPoolClosedError) {
      return {
        status: 'failed',
        finalizationError: 'the worker shut down before the run started',
        failure: { stage: 'worker', stepIndex: null },
        stepResults,
      };
    }
    if (!(err instanceof BrowserGoneError)) this.logger.error(`Run ${run.id} could not get a browser session`, (err as Error)?.stack);
    const message = err instanceof BrowserGoneError ? 'the browser crashed during the run' : 'no browser session could be started';
    return { status: 'failed', finalizationError: message, failure: { stage: 'browser', stepIndex: null }, stepResults };
  }

  /**
   * The run sweep: ends `running` runs far past their budget (their worker died and the queue lost
   * them), has the reconciler (`DurableQueueService.reconcile`) re-queue `pending` runs without
   * a live queue entry, and deletes the videos and screenshots of runs past `RESULT_TTL_DAYS`.
   * Returns what it did (`requeued`: runs the reconciler's pass queued again; 0 when the pass could
   * not run or failed).
   */
  async sweep(): Promise<{ requeued: number; stranded: number; filesDeleted: number }> {
    const stranded = (await this.lifecycle.strandedRunning(FINALIZE_SLACK_MS)).filter((id) => !this.isInFlight(id));
    for (const id of stranded) await this.lifecycle.failStranded(id);
    // A pass that fails (Redis or PostgreSQL went away mid-pass) is repeated by the reconciler's own timer.
    const requeued = await this.durableQueues.reconcile().then(
      (pass) => pass.requeued.run ?? 0,
      (err) => {
        this.logger.warn(`Run sweep: the reconciler's pass failed: ${(err as Error).message}`);
        return 0;
      },
    );
    if (stranded.length) this.logger.warn(`Run sweep: ${stranded.length} stranded runs failed`);
    const filesDeleted = await this.lifecycle.purgeExpiredFiles(this.files.expiredBefore(this.clock.now()), PURGE_BATCH);
    return { requeued, stranded: stranded.length, filesDeleted };
  }
}
