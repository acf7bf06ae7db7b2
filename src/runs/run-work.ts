import { InjectQueue } from '@nestjs/bull';
import { Injectable } from '@nestjs/common';
import type { Queue } from 'bull';
import { Clock } from '../common/clock';
import { DurableQueueService, DurableWork, pendingRowIds } from '../queue/durable-queue.service';
import { RUN_JOB, RUN_QUEUE, RunPayload } from '../queue/queues';
import { Run } from './run.entity';

/**
 * How long a `pending` run with sensitive `fill` steps is left to the request that accepted it before
 * the reconciler may queue it, ms: its values exist only in the queue entry that request adds, and a
 * re-queue first would take the run's queue job id without them.
 */
export const SENSITIVE_RUN_GRACE_MS = 30_000;

/**
 * Times a run's queue entry may give its turn to another account's run before it claims its run
 * anyway, so no entry waits for ever (docs/durability.md, "Fair share"): its Bull `attempts` are this
 * plus one (a turn given is a retry of the entry, see {@link RUN_YIELD_DELAY_MS}).
 */
export const MAX_RUN_YIELDS = 20;

/** How long an entry that gave its turn stays delayed before it is taken again, ms (Bull's fixed back-off). */
export const RUN_YIELD_DELAY_MS = 200;

/**
 * Browser session runs as durable queued work ({@link DurableQueueService}): one `runs` queue job per
 * run row, its id the row's id, its payload `{ runId }` (plus, only when the accepting request adds
 * it, the values of sensitive `fill` steps). The entry is removed when the run ends. A `pending` run
 * without a live queue entry is queued again by the reconciler (CONTRACT.md, "Rate limits and
 * back-pressure", Durability); a run with sensitive steps only after {@link SENSITIVE_RUN_GRACE_MS},
 * and then without its values (it fails at its sensitive step rather than stay `pending`).
 */
@Injectable()
export class RunWork {
  /** Pass to `DurableQueueService.enqueue`. */
  readonly work: DurableWork<RunPayload>;

  constructor(@InjectQueue(RUN_QUEUE) queue: Queue<RunPayload>, queues: DurableQueueService, clock: Clock) {
    this.work = queues.register<RunPayload>({
      kind: 'run',
      queue,
      jobName: RUN_JOB,
      payload: (runId) => ({ runId }),
      jobOptions: {
        removeOnComplete: true,
        removeOnFail: true,
        attempts: MAX_RUN_YIELDS + 1,
        backoff: { type: 'fixed', delay: RUN_YIELD_DELAY_MS },
      },
      pendingIds: pendingRowIds(Run, (query) =>
        query.andWhere(`(NOT (work.steps @> '[{"sensitive": true}]'::jsonb) OR work.createdAt < :graceStart)`, {
          graceStart: new Date(clock.now().getTime() - SENSITIVE_RUN_GRACE_MS),
        }),
      ),
    });
  }
}
