import { InjectQueue } from '@nestjs/bull';
import { Injectable } from '@nestjs/common';
import type { Queue } from 'bull';
import { DurableQueueService, DurableWork } from '../queue/durable-queue.service';
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
      pendingIds: async (manager, afterId, limit) => {
        const query = manager
          .createQueryBuilder(Crawl, 'work')
          .select('work.id', 'id')
          .where(`work.status IN ('pending', 'running')`)
          .orderBy('work.id', 'ASC')
          .limit(limit);
        if (afterId !== null) query.andWhere('work.id > :afterId', { afterId });
        return (await query.getRawMany<{ id: string }>()).map((row) => row.id);
      },
    });
  }
}
