import { BullModule } from '@nestjs/bull';
import { DynamicModule, Global, Module } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { RUN_PROCESSORS } from './queues';

/**
 * Bull on Redis under `QUEUE_PREFIX`, and whether this process runs the queue processors
 * (`WORKER_MODE=inline` in the API, always in `worker.ts`, never in the CLI).
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
        }),
      ],
      providers: [{ provide: RUN_PROCESSORS, useValue: runProcessors }],
      exports: [RUN_PROCESSORS],
    };
  }
}
