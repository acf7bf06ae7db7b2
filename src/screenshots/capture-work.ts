import { InjectQueue } from '@nestjs/bull';
import { Injectable } from '@nestjs/common';
import type { Queue } from 'bull';
import { DurableQueueService, DurableWork, pendingRowIds } from '../queue/durable-queue.service';
import { CAPTURE_JOB, CAPTURE_QUEUE, CapturePayload } from '../queue/queues';
import { ScreenshotJob } from './screenshot-job.entity';

/**
 * Screenshot jobs as durable queued work: one `captures` queue job per job row, its id the row's id,
 * its payload `{ jobId }`; a `pending` row without a live queue entry is queued again by the
 * reconciler ({@link DurableQueueService}).
 */
@Injectable()
export class CaptureWork {
  /** Pass to `AcceptanceService.accept` (`queue: [{ work, id }]`) or `DurableQueueService.enqueue`. */
  readonly work: DurableWork<CapturePayload>;

  constructor(@InjectQueue(CAPTURE_QUEUE) queue: Queue<CapturePayload>, queues: DurableQueueService) {
    this.work = queues.register<CapturePayload>({
      kind: 'screenshot job',
      queue,
      jobName: CAPTURE_JOB,
      payload: (jobId) => ({ jobId }),
      // Kept a while after failing so operators can inspect it; the reconciler replaces it if the row is still pending.
      jobOptions: { removeOnComplete: true, removeOnFail: 1000 },
      pendingIds: pendingRowIds(ScreenshotJob),
    });
  }
}
