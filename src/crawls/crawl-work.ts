import { InjectQueue } from '@nestjs/bull';
import { Injectable } from '@nestjs/common';
import type { Queue } from 'bull';
import { DurableQueueService, DurableWork, pendingRowIds } from '../queue/durable-queue.service';
import { CRAWL_JOB, CRAWL_QUEUE, CrawlPayload } from '../queue/queues';
import { Crawl } from './crawl.entity';

/**
 * Crawls as durable queued work ({@link DurableQueueService}): one `crawls` queue job per crawl, its id
 * the crawl's, its payload `{ crawlId }`, held by the worker driving the crawl. The reconciler queues
 * again every `pending` crawl and, unlike other work, every `running` one without a live queue entry:
 * a crawl is resumed (CONTRACT.md, "Crawls": "resumed after a worker or API crash"), never failed,
 * when its driver's process stopped or Redis lost the entry.
 */
@Injectable()
export class CrawlWork {
  /** Pass to `DurableQueueService.enqueue`. */
  readonly work: DurableWork<CrawlPayload>;

  constructor(@InjectQueue(CRAWL_QUEUE) queue: Queue<CrawlPayload>, queues: DurableQueueService) {
    this.work = queues.register<CrawlPayload>({
      kind: 'crawl',
      queue,
      jobName: CRAWL_JOB,
      payload: (crawlId) => ({ crawlId }),
      jobOptions: { removeOnComplete: true, removeOnFail: true },
      pendingIds: pendingRowIds(Crawl, undefined, ['pending', 'running']),
    });
  }
}
