import { Inject, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import type { Job, Queue } from 'bull';
import pLimit from 'p-limit';
import { DurableQueueService } from './durable-queue.service';
import { RUN_PROCESSORS } from './queues';
import { retryStateWrite } from './state-writes';

/** Bull's failure reason for a job whose workers died more often than `maxStalledCount` allows. */
export const STALLED_TOO_OFTEN = 'job stalled more than allowable limit';

/** Longest a stopping processor waits for its queue's worker naming to end, ms (it takes 0–10 ms with Redis up; with Redis away it never ends, and the close then ends it). */
const WORKER_NAMING_WAIT_MS = 1_000;

/** The worker naming of each queue {@link nameWorkerQuietly} wrapped: settles when every call so far has. */
const workerNaming = new WeakMap<Queue, Promise<unknown>>();

/**
 * Bull 4's `process()` names the queue's blocking connection (`setWorkerName`, a `CLIENT SETNAME`)
 * without waiting for it or handling its failure (node_modules/bull/lib/queue.js, `setHandler`). A
 * queue closed before the naming ran then either rejects it unhandled (`undefined` as the reason) or,
 * when the naming runs after the close, opens a blocking connection that nothing closes. So, on this
 * queue instance only, a failure to name is dropped (the name only labels the connection in
 * `queue.getWorkers()`) and each naming is recorded, for a stopping processor to wait on before the
 * queue closes.
 */
function nameWorkerQuietly(queue: Queue): void {
  const named = queue as Queue & { setWorkerName?: () => Promise<unknown> };
  const setWorkerName = named.setWorkerName;
  if (typeof setWorkerName !== 'function' || workerNaming.has(queue)) return;
  workerNaming.set(queue, Promise.resolve());
  named.setWorkerName = () => {
    const naming = setWorkerName.call(queue).catch(() => undefined);
    workerNaming.set(queue, Promise.all([workerNaming.get(queue), naming]));
    return naming;
  };
}

/**
 * Ends the queue's blocking connection at once, aborting the wait for the next job (a `BRPOPLPUSH` of
 * up to Bull's `drainDelay`, 5 s) that this process's handlers keep open. Bull's own pause and close
 * send `QUIT` on that connection first, which Redis reads only after the wait ends, and give up after
 * 500 ms (node_modules/bull/lib/queue.js, `redisClientDisconnect`): half a second per queue, one queue
 * after another, on every shutdown. Bull reconnects it itself when it pauses the queue (and closes it
 * for good with the queue); no job is lost, as a job is only taken from the wait list by that call.
 */
function abortBlockingWait(queue: Queue): void {
  const internals = queue as Queue & { bclientInitialized?: boolean; bclient?: { status: string; disconnect(): void } };
  if (internals.bclientInitialized && internals.bclient?.status === 'ready') internals.bclient.disconnect();
}

/** Resolves once `work` has settled (either way) or `timeoutMs` ms have passed, whichever comes first. */
async function settledWithin(work: Promise<unknown>, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work.catch(() => undefined), new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
  clearTimeout(timer);
}

/** A periodic job of a processor: a Bull repeatable (one worker runs it per interval), re-registered by the reconciler. */
export interface PeriodicJob {
  /** Bull job name within the processor's queue. */
  jobName: string;
  /** Interval, ms. */
  everyMs: number;
  /** The work of one run; its result is the queue job's return value. */
  run(): Promise<unknown>;
  /** Also run once when the process starts (e.g. to recover what a previous process left). */
  atStart?: boolean;
}

/**
 * The one way a queue processor is declared (ARCHITECTURE.md, "One way to do a thing"): a subclass
 * (a Nest provider) names its `queue`, the {@link PeriodicJob}s it runs, and, when it works on rows
 * one queue job at a time, extends {@link WorkProcessor}; the base's own dependencies are injected
 * as properties, so a subclass's constructor lists only its own. This base
 * - starts nothing unless this process runs the queue processors (`WORKER_MODE=inline` or `worker.ts`);
 * - registers each periodic job with Bull (concurrency 1) and with the reconciler of
 *   {@link DurableQueueService}, which (re-)adds the repeatable, so start-up never waits for Redis;
 * - offers {@link write}: a state write retried with back-off while PostgreSQL is unreachable
 *   (`retryStateWrite`, CONTRACT.md "Durability"), which stops retrying once the process is stopping.
 */
export abstract class QueueProcessor implements OnApplicationBootstrap, OnModuleDestroy {
  /** Named after the subclass (`CaptureProcessor`, …). */
  protected readonly logger = new Logger(this.constructor.name);
  /** The queue whose jobs this processor runs. */
  protected abstract readonly queue: Queue;
  /** Aborted when the process stops: state writes stop retrying (the reconciler or a sweep takes their rows). */
  protected readonly stopping = new AbortController();
  /** Whether this process runs the queue processors (injected). */
  @Inject(RUN_PROCESSORS) protected readonly runProcessors!: boolean;
  /** The reconciler, which registers the periodic jobs (injected). */
  @Inject(DurableQueueService) protected readonly durableQueues!: DurableQueueService;

  /** The periodic jobs of this processor (none by default). */
  protected periodicJobs(): PeriodicJob[] {
    return [];
  }

  /** Starts the processor's handlers when this process runs processors; never waits for Redis. */
  onApplicationBootstrap(): void {
    if (!this.runProcessors) return;
    this.start();
    for (const periodic of this.periodicJobs()) {
      this.listen(periodic.jobName, 1, () => periodic.run());
      this.durableQueues.registerRepeatable({ queue: this.queue, jobName: periodic.jobName, everyMs: periodic.everyMs });
      if (periodic.atStart)
        void periodic.run().catch((err) => this.logger.error(`Start-up ${periodic.jobName} failed`, (err as Error).stack));
    }
  }

  /** Where a subclass registers its own handlers (called at bootstrap, before the periodic jobs). */
  protected start(): void {}

  async onModuleDestroy(): Promise<void> {
    if (!this.runProcessors) return;
    this.stopping.abort();
    // Before the queue closes (@nestjs/bull closes it at application shutdown, after this hook).
    await settledWithin(workerNaming.get(this.queue) ?? Promise.resolve(), WORKER_NAMING_WAIT_MS);
    abortBlockingWait(this.queue);
    await this.stop();
  }

  /** What a subclass does at shutdown, after {@link stopping} aborted (nothing by default). */
  protected async stop(): Promise<void> {}

  /**
   * Bull's `queue.process(jobName, concurrency, handler)`, without unhandled rejections: its promise
   * settles only when the queue stops and rejects when a Redis connection closes under it, as a
   * shutdown right after start-up does (the connections are still being set up). Such an error while
   * the process is stopping is that shutdown; any other is logged.
   */
  protected listen(jobName: string, concurrency: number, handler: (job: Job) => Promise<unknown>): void {
    nameWorkerQuietly(this.queue);
    this.queue.process(jobName, concurrency, handler).catch((err: unknown) => {
      if (!this.stopping.signal.aborted) this.logger.error(`The ${jobName} handler of ${this.queue.name} stopped`, (err as Error)?.stack);
    });
  }

  /** Runs the state write `write` ({@link retryStateWrite}); `what` names it in logs (e.g. `claim scr_…`). */
  protected write<T>(what: string, write: () => Promise<T>): Promise<T> {
    return retryStateWrite(what, write, this.logger, this.stopping.signal);
  }
}

/**
 * A {@link QueueProcessor} that works on one row per queue job, in four steps: **claim** the row with
 * a guarded state write (null: nothing to do, e.g. it already ended), **work** on it (never throws for
 * the work's own failures: they become the outcome), **finish** it with a guarded state write, and
 * **retry**: the claim and the finish go through {@link write}, so a PostgreSQL outage delays them
 * rather than losing them. A queue job Bull gave up on because its workers kept dying is handed to
 * {@link abandon}.
 *
 * Shutdown: the queue is paused for this process, {@link stopping} aborts (work that listens to it
 * stops early) and the jobs in flight are awaited for at most {@link shutdownWaitMs}; what is still
 * running then is redelivered by Bull's stalled-job check or taken by the reconciler.
 *
 * `D` is the queue job's payload, `I` the input of one piece of work, `C` what the claim returns and
 * `O` the work's outcome.
 */
export abstract class WorkProcessor<D, I, C, O> extends QueueProcessor {
  private readonly inFlight = new Map<string, Promise<void>>();

  /** Bull job name of one piece of work. */
  protected abstract readonly jobName: string;
  /** Pieces of work run at once by this process. */
  protected abstract concurrency(): number;
  /** Longest a shutdown waits for the work in flight, ms. */
  protected abstract shutdownWaitMs(): number;
  /** The work's input from a queue job's payload. */
  protected abstract inputOf(data: D): I;
  /** The id of the row the input names (logs, {@link isInFlight}). */
  protected abstract idOf(input: I): string;
  /** Claims the row (a guarded state write); null when there is nothing to do. */
  protected abstract claim(input: I): Promise<C | null>;
  /** The work on a claimed row; its failures are part of the outcome. */
  protected abstract work(claimed: C, input: I): Promise<O>;
  /** Ends the work with its outcome (a guarded state write). */
  protected abstract finish(claimed: C, outcome: O, input: I): Promise<unknown>;
  /** Ends a row whose queue job Bull gave up on (its workers died more often than allowed); nothing by default. */
  protected abandon(_input: I): Promise<unknown> {
    return Promise.resolve();
  }

  /**
   * Registers the work's handler. Bull 4 adds up the concurrency of every named handler of a queue and
   * lets each of their fetch loops take any job of it, so with a periodic job on the same queue (a
   * sweep) more than {@link concurrency} pieces of work could run at once; the handler therefore also
   * waits for one of {@link concurrency} turns in this process before it handles a queue job.
   */
  protected override start(): void {
    if (this.concurrency() > 0) {
      const turn = pLimit(this.concurrency());
      this.listen(this.jobName, this.concurrency(), (job: Job<D>) => turn(() => this.handle(job)));
    }
    this.queue.on('failed', (job: Job<D>, err: Error) => {
      if (job.name !== this.jobName || err?.message !== STALLED_TOO_OFTEN) return;
      const input = this.inputOf(job.data);
      void this.write(`abandon ${this.idOf(input)}`, () => this.abandon(input)).catch((e) =>
        this.logger.error(`Could not end ${this.idOf(input)}`, (e as Error).stack),
      );
    });
  }

  /** Bull's handler of one queue job: {@link process} of its input (a subclass may first look at the queue job itself). */
  protected handle(job: Job<D>): Promise<void> {
    return this.process(this.inputOf(job.data));
  }

  /**
   * Claims, works on and finishes one piece of work (see the class comment). Never throws for the
   * work's own failures; throws only when the process stops while PostgreSQL is unreachable (the row
   * then stays as it was) or on an error that is not a dependency outage.
   */
  async process(input: I): Promise<void> {
    const id = this.idOf(input);
    const claimed = await this.write(`claim ${id}`, () => this.claim(input));
    if (claimed === null) return;
    const done = (async () => {
      const outcome = await this.work(claimed, input);
      await this.write(`finish ${id}`, () => this.finish(claimed, outcome, input));
    })();
    this.inFlight.set(id, done);
    try {
      await done;
    } finally {
      if (this.inFlight.get(id) === done) this.inFlight.delete(id);
    }
  }

  /** Whether this process is working on the row `id` right now. */
  protected isInFlight(id: string): boolean {
    return this.inFlight.has(id);
  }

  protected override async stop(): Promise<void> {
    await this.queue
      .pause(true, true)
      .catch((err) => this.logger.warn(`Could not pause the ${this.queue.name} queue: ${(err as Error).message}`));
    await settledWithin(Promise.allSettled([...this.inFlight.values()]), this.shutdownWaitMs());
  }
}
