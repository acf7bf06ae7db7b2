import { BullModule } from '@nestjs/bull';
import { DynamicModule, Global, Module } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { DurableQueueService } from './durable-queue.service';
import { RUN_PROCESSORS } from './queues';
import { WorkEndWaiter } from './work-ended';

/**
 * Bull on Redis under `QUEUE_PREFIX`, whether this process runs the queue processors
 * (`WORKER_MODE=inline` in the API, always in `worker.ts`, never in the CLI), and the
 * {@link DurableQueueService} (queueing after commit, the reconciler).
 */
@Global()
@Module({})
export class QueueModule {
  static forRoot(config: AppConfig, runProcessors: boolean): DynamicModule {
    return {
      module: QueueModule,
      imports: [
        BullModule.forRoot({
          url: config.redisUrl,
          prefix: config.queuePrefix,
          // A worker that dies mid-job loses its lock after lockDuration; the job is then redelivered once.
          settings: { lockDuration: 30_000, stalledInterval: 15_000, maxStalledCount: 1 },
          // Commands of the queue client (adding jobs) fail after a few reconnection attempts instead of
          // waiting in ioredis' offline queue for as long as Redis is away; accepted work stays in
          // PostgreSQL and the reconciler queues it. (Bull's blocking and subscriber clients keep waiting.)
          redis: { maxRetriesPerRequest: 3 },
        }),
      ],
      providers: [{ provide: RUN_PROCESSORS, useValue: runProcessors }, DurableQueueService, WorkEndWaiter],
      exports: [RUN_PROCESSORS, DurableQueueService, WorkEndWaiter],
    };
  }
}
