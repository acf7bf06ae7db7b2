import { Inject, Injectable, Logger } from '@nestjs/common';
import { timingSafeEqual } from 'node:crypto';
import { bearerToken } from '../common/bearer-token';
import { sha256Bytes } from '../common/hashing';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { Metrics } from './metrics';
import { QUEUE_STATES, ServiceQueues } from './queue-metrics';

/** Time allowed to read the queue counts at scrape time, ms; a slower Redis leaves them out. */
const QUEUE_COUNT_TIMEOUT_MS = 1000;

/** An answer of the metrics endpoint. */
export interface MetricsAnswer {
  status: 200 | 401 | 404;
  contentType: string;
  body: string;
}

/**
 * The scrape: checks the bearer token (`METRICS_TOKEN`, compared in constant time), reads the
 * queue counts into `glimpse_queue_jobs`, and renders the registry in Prometheus text format.
 * Served by the API's `MetricsController` and by the worker's health port.
 */
@Injectable()
export class MetricsEndpoint {
  private readonly logger = new Logger(MetricsEndpoint.name);
  private readonly expectedTokenHash: Buffer | null;
  /** Whether the API's public port may serve the scrape (not in production without a token). */
  private readonly onPublicPort: boolean;

  constructor(
    private readonly metrics: Metrics,
    private readonly queues: ServiceQueues,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.expectedTokenHash = config.metricsToken ? sha256Bytes(config.metricsToken) : null;
    this.onPublicPort = !(config.production && !config.metricsToken);
  }

  /**
   * `authorization`: the request's `Authorization` header; `port`: `public` for the API's own port,
   * `ops` for a separate one (`METRICS_PORT`, the worker's health port). With `NODE_ENV=production`
   * and no `METRICS_TOKEN`, the public port answers 404 (CONTRACT.md, "Health and readiness").
   */
  async scrape(authorization: string | undefined, port: 'public' | 'ops' = 'ops'): Promise<MetricsAnswer> {
    if (port === 'public' && !this.onPublicPort) {
      return { status: 404, contentType: 'text/plain; charset=utf-8', body: 'Not found\n' };
    }
    if (this.expectedTokenHash) {
      const token = bearerToken(authorization);
      if (!token || !timingSafeEqual(sha256Bytes(token), this.expectedTokenHash)) {
        return {
          status: 401,
          contentType: 'text/plain; charset=utf-8',
          body: 'Send the metrics token as "Authorization: Bearer <METRICS_TOKEN>"\n',
        };
      }
    }
    await this.readQueueCounts();
    return { status: 200, contentType: this.metrics.registry.contentType, body: await this.metrics.registry.metrics() };
  }

  private async readQueueCounts(): Promise<void> {
    const gauge = this.metrics.queueJobs;
    await Promise.all(
      this.queues.all().map(async (queue) => {
        try {
          const counts = await withTimeout(queue.getJobCounts(), QUEUE_COUNT_TIMEOUT_MS);
          for (const state of QUEUE_STATES)
            gauge.set({ queue: queue.name, state }, (counts as unknown as Record<string, number>)[state] ?? 0);
        } catch (err) {
          for (const state of QUEUE_STATES) gauge.remove({ queue: queue.name, state });
          this.logger.warn(`Could not read the counts of queue ${queue.name}: ${(err as Error).message}`);
        }
      }),
    );
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
