import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, EntityTarget, ObjectLiteral } from 'typeorm';
import type { AuthenticatedKey } from '../auth/api-keys.service';
import { GroupCommit } from '../sql/group-commit';
import { insertSelectSql, SqlParams } from '../sql/sql-statement';
import { IdempotencyService } from '../idempotency/idempotency.service';
import { DurableQueueService, DurableWork } from '../queue/durable-queue.service';
import { QuotaService } from '../quota/quota.service';
import { PendingJobsLimit } from './pending-jobs-limit';

/** One row to queue once the acceptance has committed: its kind of work and its id (= the queue job id). */
export interface WorkToQueue {
  work: DurableWork;
  id: string;
}

/** Rows of one entity to insert (`pending` jobs, runs, an upload's document), each a full entity as `repository.create` makes it. */
export interface RowsToInsert {
  entity: EntityTarget<ObjectLiteral>;
  rows: ObjectLiteral[];
}

/** One acceptance of work: who, how much it counts, what it writes, answers and queues. */
export interface AcceptanceRequest<T> {
  /** The API key accepting the work: its monthly quota is counted. */
  caller: AuthenticatedKey;
  /** Screenshots to count, all or nothing (default 1: a job or a run; a batch counts its items; 0 counts none). */
  count?: number;
  /** Jobs and runs this adds to the account's work not yet ended ({@link PendingJobsLimit}; default 1; a batch: its items). */
  incoming?: number;
  /** The rows to insert, in order (a row may reference one before it). */
  insert: RowsToInsert[];
  /** The success response body (a DTO, serialised as JSON); stored for `Idempotency-Key` replays. */
  response: T;
  /** The rows to queue once accepted. */
  queue: WorkToQueue[];
}

/** What the acceptance statement found: the account's work not yet ended and whether `incoming` more fitted, the usage after the reservation (null: none made), and whether the request still held its `Idempotency-Key`. */
interface AcceptanceOutcome {
  pending: number;
  room: boolean;
  used: number | null;
  leased: boolean;
}

/**
 * The one way work (capture jobs, batches, browser session runs) is accepted (CONTRACT.md, "Rate
 * limits and back-pressure", Durability), in ONE PostgreSQL statement (one round trip;
 * docs/performance.md#accept-path) whose parts run all or not at all (one account's statements that
 * arrive while another of its runs share one transaction and commit: {@link GroupCommit}; they all lock
 * the account's quota row):
 * - the account's work not yet ended ({@link PendingJobsLimit}) must leave room for `incoming`;
 * - with an `Idempotency-Key`, the request must still hold its lease ({@link IdempotencyService.acceptanceParts});
 * - then the quota is counted, the key's cap and the account's ceiling ({@link QuotaService.reservation}), and only when it was, the rows are
 *   inserted and the response is stored for replay.
 *
 * After it, each row is queued under its own id ({@link DurableQueueService.enqueue}: bounded, never
 * failing the request; a row Redis could not take stays `pending` and the reconciler queues it), and
 * the quota warnings the new usage reached are published.
 *
 * So a crash at any point leaves either nothing (not counted, the key free again once its lease runs
 * out) or the whole acceptance (counted once, replayed for its key, queued by the API or the
 * reconciler). PostgreSQL unreachable: the statement fails and the request is 503
 * `SERVICE_UNAVAILABLE`, nothing accepted or counted.
 *
 * ```ts
 * return this.acceptance.accept({
 *   caller,
 *   count: captures.length,
 *   incoming: jobs.length,
 *   insert: [{ entity: ScreenshotJob, rows: jobs }],
 *   response: { data: jobs.map(toDto) },
 *   queue: captures.map((j) => ({ work: this.captureWork.work, id: j.id })),
 * });
 * ```
 *
 * Throws, with nothing stored or counted: 409 `IDEMPOTENCY_IN_FLIGHT` when the request lost its key's
 * lease, 429 `TOO_MANY_PENDING_JOBS` when the account has no room, 429 `PLAN_QUOTA_EXCEEDED` when the
 * cap would be exceeded (in this order), and database errors (503).
 */
@Injectable()
export class AcceptanceService {
  /** One account's acceptance statements that arrive while another of its runs commit together (docs/performance.md#accept-path). */
  private readonly commits: GroupCommit;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly quota: QuotaService,
    private readonly idempotency: IdempotencyService,
    private readonly pendingJobs: PendingJobsLimit,
    private readonly queues: DurableQueueService,
  ) {
    this.commits = new GroupCommit(dataSource);
  }

  /** Accepts the work described by `request` (see the class comment); resolves to its response. */
  async accept<T>(request: AcceptanceRequest<T>): Promise<T> {
    const { afterCommit } = await this.acceptWithin(null, request);
    await afterCommit();
    return request.response;
  }

  /**
   * The acceptance statement of {@link accept} run in `manager`'s transaction (null: on its own), so a
   * caller can accept work together with its own writes (a monitor's scheduled check: the monitor's
   * next slot, the check row and its capture job commit together). Returns the work to run once that
   * transaction committed (queueing, quota warnings). Throws as {@link accept}; a refusal (lease, room,
   * quota) leaves the transaction usable, having written nothing.
   */
  async acceptWithin<T>(manager: EntityManager | null, request: AcceptanceRequest<T>): Promise<{ afterCommit: () => Promise<void> }> {
    const count = request.count ?? 1;
    const incoming = request.incoming ?? 1;
    // The response text, only when an Idempotency-Key is held: it is stored, and the interceptor sends exactly it.
    const held = this.idempotency.heldKey();
    const stored = held ? { key: held, body: JSON.stringify(request.response) } : null;
    const params = new SqlParams();
    const parts = [
      `room AS (SELECT pending, ${this.pendingJobs.roomSql(params, 'pending', incoming)} AS fits
                  FROM (SELECT ${this.pendingJobs.countSql(params, request.caller.accountId)} AS pending) AS counted)`,
    ];
    const idempotency = stored ? this.idempotency.acceptanceParts(params, stored.key, stored.body) : null;
    if (idempotency) parts.push(idempotency.leaseSql);
    parts.push(`gate AS (SELECT 1 FROM room WHERE room.fits${idempotency ? ' AND EXISTS (SELECT 1 FROM lease)' : ''})`);
    const reservation = count > 0 ? this.quota.reservation(params, request.caller, count, 'gate') : null;
    if (reservation) parts.push(reservation.sql);
    parts.push(`accepted AS (SELECT 1 FROM ${reservation ? 'reservation' : 'gate'})`);
    request.insert.forEach(({ entity, rows }, i) =>
      insertSelectSql(this.dataSource, params, entity, rows, 'accepted').forEach((sql, j) => parts.push(`insert_${i}_${j} AS (${sql})`)),
    );
    if (idempotency) parts.push(idempotency.storeSql('accepted'));
    const text = `WITH ${parts.join(',\n')}
       SELECT (SELECT pending FROM room) AS pending, (SELECT fits FROM room) AS room, ${reservation ? '(SELECT used FROM reservation)' : 'NULL::int'} AS used,
              ${idempotency ? 'EXISTS (SELECT 1 FROM lease)' : 'true'} AS leased`;
    const [outcome] = manager
      ? ((await manager.query(text, params.values)) as AcceptanceOutcome[])
      : await this.commits.run<AcceptanceOutcome>(request.caller.accountId, text, params.values);
    if (!outcome.leased) throw this.idempotency.leaseLost();
    if (!outcome.room) throw await this.pendingJobs.refusal(request.caller.accountId, outcome.pending, incoming);
    const quota = reservation ? await reservation.settle(outcome.used) : null;
    if (stored) this.idempotency.markStored(stored.key, stored.body);
    return {
      afterCommit: async () => {
        await Promise.all(request.queue.map(({ work, id }) => this.queues.enqueue(work, id)));
        if (quota) await this.quota.warnOnThresholds(request.caller, quota);
      },
    };
  }
}
