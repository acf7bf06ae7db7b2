import { InjectQueue } from '@nestjs/bull';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import type { Job, Queue } from 'bull';
import { readFile } from 'node:fs/promises';
import { BrowserGoneError, BrowserPoolClosedError } from '../browser/browser-errors';
import { BrowserPool } from '../browser/browser-pool';
import { SessionSetup, sessionContextOptions } from '../capture/session-options';
import { Clock } from '../common/clock';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { EgressProxy } from '../egress/egress-proxy';
import { RUN_JOB, RUN_PROCESSORS, RUN_QUEUE, RunPayload } from '../queue/queues';
import { DurableQueueService } from '../queue/durable-queue.service';
import { ResultFilesService } from '../storage/result-files.service';
import { RunFailure, runSession, RunSessionOutcome } from './run-session';
import { withSecrets } from './run-steps';
import { openRunValues } from './sealed-run-values';
import { SecretCipher } from '../common/secret-cipher';
import { Run } from './run.entity';
import { RunEnding, RunsService, skippedSteps } from './runs.service';

/** Queue job name of the runs reconciler (a repeatable job: one worker runs it per interval). */
export const RUN_SWEEP_JOB = 'run-sweep';
/** How often the reconciler runs, ms (CONTRACT.md, "Rate limits and back-pressure", Durability). */
export const RUN_SWEEP_INTERVAL_MS = 30_000;
/** A `pending` run older than this without a queue entry is queued again, ms. */
const PENDING_GRACE_MS = 30_000;
/** Beyond its budget, the time a `running` run may take to finalize before the reconciler ends it, ms. */
const FINALIZE_SLACK_MS = 180_000;
/** Time after the budget for stopping the video and reading the final page, before the context closes, ms. */
const LEASE_GRACE_MS = 60_000;
/** Runs whose files are deleted at most per sweep (a backlog is worked off over several sweeps). */
const PURGE_BATCH = 200;
/** How often a running run checks for a cancel, ms. */
const CANCEL_POLL_MS = 500;
/** Longest a shutdown waits for interrupted runs to store what they recorded, ms. */
const SHUTDOWN_WAIT_MS = 45_000;

/** The session options could not be applied to the leased context (a cookie Chromium refuses); customer-safe message. */
class SessionSetupError extends Error {}

/**
 * Runs browser sessions from the `runs` queue, `RUN_CONCURRENCY` at once per worker (separate from
 * `CAPTURE_CONCURRENCY`, so runs never starve captures): claims the run (`pending` → `running`),
 * leases a fresh context from the {@link BrowserPool} (every request through the egress proxy and
 * its SSRF guard), runs {@link runSession}, stores the video and ends the run through
 * {@link RunsService.finish} (`run.completed` / `run.failed`).
 *
 * Never stuck `running`: a run redelivered after its worker died is ended `failed` (stage
 * `worker`), never run twice; the reconciler (every 30 s, and at start) ends `running` runs far past
 * their budget and re-queues `pending` runs whose queue entry was lost (without their sensitive
 * values, which lived only there: such a run then fails at its sensitive step). On shutdown, running
 * sessions are interrupted and end `failed` (stage `worker`) with what they recorded.
 */
@Injectable()
export class RunProcessor implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(RunProcessor.name);
  private readonly inFlight = new Map<string, { abort: AbortController; done: Promise<void> }>();

  constructor(
    @InjectQueue(RUN_QUEUE) private readonly queue: Queue<RunPayload>,
    private readonly runs: RunsService,
    private readonly pool: BrowserPool,
    private readonly proxy: EgressProxy,
    private readonly files: ResultFilesService,
    private readonly session: SessionSetup,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(RUN_PROCESSORS) private readonly runProcessors: boolean,
    private readonly durableQueues: DurableQueueService,
    private readonly cipher: SecretCipher,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.runProcessors) return;
    if (this.config.runConcurrency > 0) {
      void this.queue.process(RUN_JOB, this.config.runConcurrency, (job: Job<RunPayload>) => this.process(job.data));
    }
    void this.queue.process(RUN_SWEEP_JOB, 1, () => this.sweep());
    // A queue job that stalled more often than Bull allows (its workers died) ends here.
    this.queue.on('failed', (job: Job<RunPayload>) => {
      if (job.name !== RUN_JOB) return;
      void this.runs.failStranded(job.data.runId).catch((e) => this.logger.error(`Could not end ${job.data.runId}`, (e as Error).stack));
    });
    // Registered (and re-registered after a Redis that restarted empty) by the reconciler; start-up never waits for Redis.
    this.durableQueues.registerRepeatable({ queue: this.queue, jobName: RUN_SWEEP_JOB, everyMs: RUN_SWEEP_INTERVAL_MS });
    void this.sweep().catch((err) => this.logger.error('Run reconciler failed', (err as Error).stack));
  }

  async onModuleDestroy(): Promise<void> {
    if (!this.runProcessors) return;
    await this.queue.pause(true, true).catch((err) => this.logger.warn(`Could not pause the run queue: ${(err as Error).message}`));
    for (const { abort } of this.inFlight.values()) abort.abort('worker');
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all([...this.inFlight.values()].map((r) => r.done)),
      new Promise((resolve) => (timer = setTimeout(resolve, SHUTDOWN_WAIT_MS))),
    ]);
    clearTimeout(timer);
  }

  /** Claims, runs and ends one run. Never throws for anything the page or the browser does. */
  async process(payload: RunPayload): Promise<void> {
    const run = await this.runs.claim(payload.runId);
    if (!run) return;
    const abort = new AbortController();
    const done = this.execute(run, payload, abort);
    this.inFlight.set(run.id, { abort, done });
    try {
      await done;
    } finally {
      this.inFlight.delete(run.id);
    }
  }

  private async execute(run: Run, payload: RunPayload, abort: AbortController): Promise<void> {
    const cancelPoll = setInterval(() => {
      void this.runs.cancelRequested(run.id).then(
        (requested) => requested && abort.abort('canceled'),
        () => undefined,
      );
    }, CANCEL_POLL_MS);
    let ending: RunEnding;
    try {
      const sensitiveValues = openRunValues(this.cipher, payload);
      const outcome = await this.pool.withLease(
        { budgetMs: run.timeoutMs + this.config.captureTimeoutMs, graceMs: LEASE_GRACE_MS, context: sessionContextOptions(run.options) },
        async (lease) => {
          await this.session.apply(lease, run.options, run.url).catch((err: Error) => {
            throw new SessionSetupError(`cookies could not be set: ${err.message.split('\n')[0].replace(/^[a-zA-Z.]+: /, '')}`);
          });
          return runSession(
            lease.page,
            {
              url: run.url,
              steps: withSecrets(run.steps, sensitiveValues),
              timeoutMs: run.timeoutMs,
              navigationTimeoutMs: this.config.captureTimeoutMs,
              video: run.video ? { ffmpegPath: this.config.ffmpegPath, width: run.options.width, height: run.options.height } : null,
              sensitiveValues: Object.values(sensitiveValues),
            },
            {
              signal: abort.signal,
              saveScreenshot: (image, format) => this.files.save(image, format),
              onProgress: (steps) => this.runs.progress(run.id, steps),
              egress: this.proxy,
            },
          );
        },
      );
      ending = await this.finalize(run, outcome);
    } catch (err) {
      ending = this.browserFailure(run, err);
    } finally {
      clearInterval(cancelPoll);
    }
    await this.runs.finish(run.id, ending, ['running']);
  }

  /** Stores the video (the screenshots are stored as they are taken) and decides how the run ends. */
  private async finalize(run: Run, outcome: RunSessionOutcome): Promise<RunEnding> {
    let videoFile: string | null = null;
    let finalizeError: string | null = null;
    if (outcome.video) {
      try {
        videoFile = await this.files.save(await readFile(outcome.video.path), 'webm');
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
    const failure: RunFailure | null = outcome.failure ?? (finalizeError ? { stage: 'finalize', stepIndex: null, message: finalizeError } : null);
    if (!failure) return { status: 'completed', ...artifacts };
    return { status: 'failed', ...artifacts, finalizationError: failure.message, failure: { stage: failure.stage, stepIndex: failure.stepIndex } };
  }

  /** How a run ends when no session could be had or the browser went away under it. */
  private browserFailure(run: Run, err: unknown): RunEnding {
    const stepResults = skippedSteps(run.steps);
    if (err instanceof SessionSetupError) {
      return { status: 'failed', finalizationError: err.message, failure: { stage: 'step', stepIndex: null }, stepResults };
    }
    if (err instanceof BrowserPoolClosedError) {
      return { status: 'failed', finalizationError: 'the worker shut down before the run started', failure: { stage: 'worker', stepIndex: null }, stepResults };
    }
    if (!(err instanceof BrowserGoneError)) this.logger.error(`Run ${run.id} could not get a browser session`, (err as Error)?.stack);
    const message = err instanceof BrowserGoneError ? 'the browser crashed during the run' : 'no browser session could be started';
    return { status: 'failed', finalizationError: message, failure: { stage: 'browser', stepIndex: null }, stepResults };
  }

  /**
   * The reconciler: ends `running` runs far past their budget (their worker died and the queue lost
   * them), re-queues `pending` runs without a queue entry, and deletes the videos and screenshots of
   * runs past `RESULT_TTL_DAYS`. Returns what it did.
   */
  async sweep(): Promise<{ requeued: number; stranded: number; filesDeleted: number }> {
    const before = new Date(this.clock.now().getTime() - PENDING_GRACE_MS);
    const { pending, running } = await this.runs.strandedRuns(before, FINALIZE_SLACK_MS);
    let requeued = 0;
    for (const id of pending) {
      if (await this.queue.getJob(id)) continue;
      await this.runs.enqueue(id);
      requeued++;
    }
    const stranded = running.filter((id) => !this.inFlight.has(id));
    for (const id of stranded) await this.runs.failStranded(id);
    if (requeued || stranded.length) this.logger.warn(`Run reconciler: ${requeued} re-queued, ${stranded.length} stranded runs failed`);
    const filesDeleted = await this.runs.purgeExpiredFiles(this.files.expiredBefore(this.clock.now()), PURGE_BATCH);
    return { requeued, stranded: stranded.length, filesDeleted };
  }
}
