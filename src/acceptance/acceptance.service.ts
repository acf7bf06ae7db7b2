import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { AuthenticatedKey } from '../auth/api-keys.service';
import { IdempotencyService } from '../idempotency/idempotency.service';
import { DurableQueueService, DurableWork } from '../queue/durable-queue.service';
import { QuotaService, QuotaStatus } from '../quota/quota.service';

/** One row to queue once the acceptance has committed: its kind of work and its id (= the queue job id). */
export interface WorkToQueue {
  work: DurableWork<any>;
  id: string;
}

/** What {@link AcceptanceRequest.write} stored: the response to answer, and the rows to queue after the commit. */
export interface AcceptedWrite<T> {
  /** The success response body (a DTO, serialised as JSON); stored for `Idempotency-Key` replays. */
  response: T;
  queue: WorkToQueue[];
}

/** One acceptance of work: who, how many screenshots it counts, and what it writes. */
export interface AcceptanceRequest<T> {
  /** The API key accepting the work: its monthly quota is counted. */
  caller: AuthenticatedKey;
  /** Screenshots to count, all or nothing (default 1: a job or a run; a batch counts its items; 0 counts none). */
  count?: number;
  /**
   * Writes the rows (`pending`) through `manager`, inside the acceptance transaction, and returns the
   * response and the rows to queue. Throw an `ApiError` to refuse: nothing is then stored or counted.
   */
  write(manager: EntityManager): Promise<AcceptedWrite<T>>;
}

/**
 * The one way work (capture jobs, batches, browser session runs) is accepted (CONTRACT.md, "Rate
 * limits and back-pressure", Durability): in ONE PostgreSQL transaction it counts the quota
 * ({@link QuotaService.countWithin}), writes the rows (`request.write`) and, when the request holds
 * an `Idempotency-Key`, stores the response for replay ({@link IdempotencyService.storeWithin}); after
 * the commit it queues each row under its own id ({@link DurableQueueService.enqueue}: bounded, never
 * failing the request; a row Redis could not take stays `pending` and the reconciler queues it) and
 * publishes the quota warnings the new usage reached.
 *
 * So a crash at any point leaves either nothing (rolled back: not counted, the key free again once its
 * lease runs out) or the whole acceptance (counted once, replayed for its key, queued by the API or
 * the reconciler). PostgreSQL unreachable: the transaction fails and the request is 503
 * `SERVICE_UNAVAILABLE`, nothing accepted or counted.
 *
 * ```ts
 * return this.acceptance.accept({
 *   caller,
 *   count: items.length,
 *   write: async (manager) => {
 *     await manager.insert(ScreenshotJob, jobs);
 *     return { response: { data: jobs.map(toDto) }, queue: jobs.map((j) => ({ work: this.captureWork, id: j.id })) };
 *   },
 * });
 * ```
 *
 * Throws what `write` throws, 429 `PLAN_QUOTA_EXCEEDED` when the cap would be exceeded, 409
 * `IDEMPOTENCY_IN_FLIGHT` when the request lost its key's lease meanwhile, and database errors (503).
 */
@Injectable()
export class AcceptanceService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly quota: QuotaService,
    private readonly idempotency: IdempotencyService,
    private readonly queues: DurableQueueService,
  ) {}

  /** Accepts the work described by `request` (see the class comment); resolves to its response. */
  async accept<T>(request: AcceptanceRequest<T>): Promise<T> {
    const count = request.count ?? 1;
    const held = this.idempotency.heldKey();
    let quota: QuotaStatus | null = null;
    const written = await this.dataSource.transaction(async (manager) => {
      if (count > 0) quota = await this.quota.countWithin(manager, request.caller, count);
      const result = await request.write(manager);
      if (held) await this.idempotency.storeWithin(manager, held, JSON.stringify(result.response));
      return result;
    });
    await Promise.all(written.queue.map(({ work, id }) => this.queues.enqueue(work, id)));
    if (quota) await this.quota.warnOnThresholds(request.caller, quota);
    return written.response;
  }
}
