import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { JobOptions, Queue } from 'bull';
import { DataSource, EntityManager, EntityTarget, ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { RUN_PROCESSORS } from './queues';

/** How often every processing process reconciles PostgreSQL with the queues (CONTRACT.md, "Durability"), ms. */
export const RECONCILE_INTERVAL_MS = 30_000;

/** How often a processing process checks whether a reconciliation is due (and Redis reachable), ms. */
const RECONCILE_TICK_MS = 1_000;

/** Delay before the next try after a reconciliation failed (PostgreSQL or Redis went away mid-pass), ms. */
const RECONCILE_RETRY_MS = 5_000;

/** Rows read per page by a reconciliation, and Redis look-ups per pipeline. */
export const RECONCILE_PAGE_SIZE = 500;

/** Longest wait for Redis when queueing accepted work from a request, ms (further bounded by `DEPENDENCY_TIMEOUT_MS`). */
export const ENQUEUE_TIMEOUT_MS = 1_000;

/**
 * Key of the PostgreSQL advisory lock held (for one transaction) by the process reconciling, so that
 * with several workers one pass runs at a time. ASCII of "glimpse!" as a 64-bit integer.
 */
const RECONCILE_LOCK_KEY = '7452728128587769633';

/**
 * A kind of queued work whose source of truth is a PostgreSQL row (a capture job, a browser session
 * run): how to queue one, and how to find the rows that wait for a worker.
 */
export interface DurableWorkDefinition<P = unknown> {
  /** Noun used in logs, e.g. `screenshot job`. */
  kind: string;
  queue: Queue<P>;
  /** Bull job name its processor listens to. */
  jobName: string;
  /** Queue payload of the row `id` (ids only: state lives in PostgreSQL). */
  payload(id: string): P;
  /** Options of its queue jobs; `jobId` is always the row id, so queueing twice is harmless. */
  jobOptions?: Omit<JobOptions, 'jobId'>;
  /**
   * Up to `limit` ids of rows waiting for a worker (status `pending`), in ascending id order after
   * `afterId` (null: from the first). Read through `manager` (the reconciler's transaction).
   */
  pendingIds(manager: EntityManager, afterId: string | null, limit: number): Promise<string[]>;
}

/**
 * The {@link DurableWorkDefinition.pendingIds} of rows of `entity` (a table with `id` and `status`
 * columns) in one of `statuses` (default `pending`; a crawl also waits for a worker while `running`),
 * in ascending id order; `narrow` adds conditions on the alias `work` (e.g. leave out rows that only
 * their request may queue), built anew on every call.
 */
export function pendingRowIds(
  entity: EntityTarget<ObjectLiteral>,
  narrow?: (query: SelectQueryBuilder<ObjectLiteral>) => void,
  statuses: readonly string[] = ['pending'],
): DurableWorkDefinition['pendingIds'] {
  return async (manager, afterId, limit) => {
    const query = manager
      .createQueryBuilder(entity, 'work')
      .select('work.id', 'id')
      .where('work.status IN (:...statuses)', { statuses })
      .orderBy('work.id', 'ASC')
      .limit(limit);
    if (afterId !== null) query.andWhere('work.id > :afterId', { afterId });
    narrow?.(query);
    return (await query.getRawMany<{ id: string }>()).map((row) => row.id);
  };
}

/** A registered {@link DurableWorkDefinition}; pass it to {@link DurableQueueService.enqueue}. */
export type DurableWork<P = unknown> = Readonly<DurableWorkDefinition<P>>;

/** A periodic job (a Bull repeatable) the reconciler re-registers, so a Redis that restarted empty gets it back. */
export interface RepeatableWork {
  queue: Queue;
  jobName: string;
  everyMs: number;
}

/** What one reconciliation did. */
export interface ReconcileResult {
  /** False when Redis was not reachable or another process held the lock: nothing was done. */
  ran: boolean;
  /** Rows found `pending` that had no live queue entry and were queued again, per kind. */
  requeued: Record<string, number>;
  repeatablesRegistered: number;
}

/**
 * PostgreSQL is the source of truth for every job and run; the queues only carry ids (CONTRACT.md,
 * "Rate limits and back-pressure", Durability). This service
 * - queues accepted work after its commit ({@link enqueue}): bounded by {@link ENQUEUE_TIMEOUT_MS} and
 *   skipped at once while Redis is unreachable, never throwing, so a request answers in time and the
 *   work is queued later;
 * - in every process that runs queue processors, reconciles at start (as soon as Redis answers),
 *   every {@link RECONCILE_INTERVAL_MS}, and at once whenever a queue's Redis connection comes back
 *   ({@link reconcile}): every `pending` row of each registered kind
 *   without a live queue entry (none, or only a completed/failed one: a Redis that restarted empty, an
 *   API killed between commit and queueing, a worker that could not write the row) is queued again
 *   under its own id, and every registered repeatable job is registered again. Passes are serialized
 *   across processes by a PostgreSQL advisory lock; a re-queue is harmless anyway (queue job id = row
 *   id, and workers claim rows with a conditional update).
 *
 * Kinds register at module init: `durableQueues.register({ kind, queue, jobName, payload, pendingIds })`.
 */
@Injectable()
export class DurableQueueService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(DurableQueueService.name);
  private readonly works: DurableWork[] = [];
  private readonly repeatables: RepeatableWork[] = [];
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<ReconcileResult> | null = null;
  /** The pass queued behind {@link running} by calls made during it. */
  private following: Promise<ReconcileResult> | null = null;
  /** When the next reconciliation is due (epoch ms); 0: as soon as Redis is reachable. */
  private nextDueAt = 0;
  private readonly watched = new Set<Queue>();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(RUN_PROCESSORS) private readonly runProcessors: boolean,
  ) {}

  /** Registers a kind of durable work (at module init); returns it for {@link enqueue}. */
  register<P>(definition: DurableWorkDefinition<P>): DurableWork<P> {
    const work = Object.freeze({ ...definition });
    this.works.push(work);
    // Bull connects lazily: connect now, so the first accepted job does not wait for it.
    void work.queue.client;
    return work;
  }

  /** Registers a repeatable job; the reconciler (re-)adds it on every pass of a processing process. */
  registerRepeatable(repeatable: RepeatableWork): void {
    this.repeatables.push(repeatable);
  }

  onApplicationBootstrap(): void {
    if (!this.runProcessors) return;
    // Nothing awaited: the process starts and serves without Redis; passes run when they can.
    this.timer = setInterval(() => void this.tick(), RECONCILE_TICK_MS);
    this.timer.unref();
    void this.tick();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  /**
   * Queues the row `id` of `work` (call it after the commit that stored the row), with `payload`
   * (default `work.payload(id)`; a payload may carry what is never stored, e.g. a run's sensitive
   * values). Returns true when queued, false when Redis could not take it within
   * {@link ENQUEUE_TIMEOUT_MS} (or is known to be away: its connection was lost and is being retried):
   * the row stays `pending` and the reconciler queues it when Redis is back. Never throws.
   */
  async enqueue<P>(work: DurableWork<P>, id: string, payload: P = work.payload(id)): Promise<boolean> {
    if (redisAway(work.queue)) {
      this.logger.warn(`Redis unreachable: ${work.kind} ${id} stays pending in PostgreSQL until the reconciler queues it`);
      return false;
    }
    const adding = this.add(work, id, payload);
    adding.catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>(
      (resolve) => (timer = setTimeout(() => resolve('timeout'), Math.min(ENQUEUE_TIMEOUT_MS, this.config.dependencyTimeoutMs))),
    );
    try {
      const outcome = await Promise.race([adding.then(() => 'added' as const), timeout]);
      if (outcome === 'timeout') this.logger.warn(`Queueing ${work.kind} ${id} timed out; the reconciler queues it`);
      return outcome === 'added';
    } catch (err) {
      this.logger.warn(`Could not queue ${work.kind} ${id} (${(err as Error).message}); the reconciler queues it`);
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * One reconciliation (see the class comment) that starts after this call, so it sees every row
   * committed before it. Skipped, with `ran: false`, while Redis is unreachable or another process
   * holds the lock. Throws when PostgreSQL or Redis fails mid-pass (the next pass repeats it). Calls
   * made while a pass runs share the one pass that follows it.
   */
  reconcile(): Promise<ReconcileResult> {
    if (!this.running) {
      this.running = this.pass().finally(() => (this.running = null));
      return this.running;
    }
    this.following ??= this.running
      .catch(() => undefined)
      .then(() => {
        this.following = null;
        return this.reconcile();
      });
    return this.following;
  }

  /** Runs a reconciliation when one is due and Redis answers; watches each queue's connection for its return. */
  private async tick(): Promise<void> {
    for (const queue of this.allQueues()) {
      if (this.watched.has(queue)) continue;
      this.watched.add(queue);
      // Redis came back (possibly empty): reconcile now rather than at the next interval.
      queue.client.on('ready', () => (this.nextDueAt = 0));
    }
    if (this.running || Date.now() < this.nextDueAt || !this.allQueues().every(redisReady)) return;
    try {
      const result = await this.reconcile();
      this.nextDueAt = Date.now() + RECONCILE_INTERVAL_MS;
      const total = Object.values(result.requeued).reduce((a, b) => a + b, 0);
      if (total) this.logger.warn(`Reconciled: re-queued ${JSON.stringify(result.requeued)}`);
    } catch (err) {
      this.nextDueAt = Date.now() + RECONCILE_RETRY_MS;
      this.logger.warn(`Reconciliation failed; retrying in ${RECONCILE_RETRY_MS / 1000} s: ${(err as Error).message}`);
    }
  }

  private allQueues(): Queue[] {
    return [...new Set([...this.works.map((w) => w.queue), ...this.repeatables.map((r) => r.queue)])];
  }

  private async pass(): Promise<ReconcileResult> {
    const result: ReconcileResult = { ran: false, requeued: {}, repeatablesRegistered: 0 };
    if (!this.allQueues().every(redisReady)) return result;
    await this.dataSource.transaction(async (manager) => {
      const [{ locked }] = await manager.query('SELECT pg_try_advisory_xact_lock($1::bigint) AS locked', [RECONCILE_LOCK_KEY]);
      if (!locked) return;
      result.ran = true;
      for (const repeatable of this.repeatables) {
        await repeatable.queue.add(
          repeatable.jobName,
          {},
          {
            repeat: { every: repeatable.everyMs },
            jobId: repeatable.jobName,
            removeOnComplete: true,
            removeOnFail: true,
          },
        );
        result.repeatablesRegistered++;
      }
      for (const work of this.works) result.requeued[work.kind] = await this.requeueLost(manager, work);
    });
    return result;
  }

  /** Queues again every pending row of `work` without a live queue entry; returns how many. */
  private async requeueLost(manager: EntityManager, work: DurableWork): Promise<number> {
    let requeued = 0;
    let afterId: string | null = null;
    for (;;) {
      const ids = await work.pendingIds(manager, afterId, RECONCILE_PAGE_SIZE);
      if (!ids.length) return requeued;
      afterId = ids[ids.length - 1];
      const live = await liveEntries(work.queue, ids);
      for (const [i, id] of ids.entries()) {
        if (live[i]) continue;
        // A completed or failed entry would make the add a no-op: drop it first.
        const stale = await work.queue.getJob(id);
        if (stale) await stale.remove();
        await this.add(work, id);
        requeued++;
      }
      if (ids.length < RECONCILE_PAGE_SIZE) return requeued;
    }
  }

  private async add<P>(work: DurableWork<P>, id: string, payload: P = work.payload(id)): Promise<void> {
    await work.queue.add(work.jobName, payload, { ...work.jobOptions, jobId: id });
  }
}

/** Whether the queue's Redis connection is up (a command now would not wait in ioredis' offline queue). */
function redisReady(queue: Queue): boolean {
  return queue.client.status === 'ready';
}

/** Whether the queue's Redis connection was lost (waiting to reconnect, or closed): not worth waiting for. */
function redisAway(queue: Queue): boolean {
  return ['reconnecting', 'close', 'end'].includes(queue.client.status);
}

/**
 * For each id, whether the queue holds a live entry for it: the job exists and is neither completed
 * nor failed (so it is waiting, delayed, active or paused). One pipelined round trip.
 */
async function liveEntries(queue: Queue, ids: string[]): Promise<boolean[]> {
  const pipeline = queue.client.pipeline();
  for (const id of ids) {
    pipeline.exists(queue.toKey(id));
    pipeline.zscore(queue.toKey('completed'), id);
    pipeline.zscore(queue.toKey('failed'), id);
  }
  const replies = (await pipeline.exec()) ?? [];
  return ids.map((_, i) => {
    const [exists, completed, failed] = replies.slice(3 * i, 3 * i + 3).map(([err, value]) => {
      if (err) throw err;
      return value;
    });
    return exists === 1 && completed === null && failed === null;
  });
}
