import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { RESULT_FORMATS } from '../results/result-formats';

/** Outcome label of `glimpse_webhook_attempts_total`. */
export type WebhookAttemptOutcome = 'success' | 'http_error' | 'network_error';

/**
 * The process's Prometheus instruments, in a registry of their own (one per app instance, so
 * several instances in one process, as in the tests, do not collide). Names and labels are listed
 * in docs/operations.md#metrics. Durations are in seconds, as Prometheus expects.
 */
@Injectable()
export class Metrics {
  readonly registry = new Registry();

  /** Requests answered, by method, route template (`/v1/screenshot/:id`, `unmatched`) and status. */
  readonly httpRequests = this.counter(
    'glimpse_http_requests_total',
    'HTTP requests answered, by method, route template and status code.',
    ['method', 'route', 'status'],
  );

  readonly httpRequestDuration = this.histogram(
    'glimpse_http_request_duration_seconds',
    'Time to answer an HTTP request, by method and route template, in seconds.',
    [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    ['method', 'route'],
  );

  /** Finished capture attempts, by `status` (`done`, `failed`) and image `format`. */
  readonly captures = this.counter('glimpse_captures_total', 'Capture attempts finished, by status (done, failed) and format.', [
    'status',
    'format',
  ]);

  readonly captureDuration = this.histogram(
    'glimpse_capture_duration_seconds',
    'Duration of one capture attempt (browser lease, navigation, screenshot, storage), in seconds.',
    [0.25, 0.5, 1, 2, 3, 5, 8, 13, 21, 34, 60, 120],
    ['status'],
  );

  /** Jobs in each queue by Bull state; set by the collector registered by `QueueMetricsCollector`. */
  readonly queueJobs = this.gauge(
    'glimpse_queue_jobs',
    'Jobs in each queue by state (waiting, active, delayed, failed, completed), read at scrape time.',
    ['queue', 'state'],
  );

  /**
   * Capture slots of this worker process (`CAPTURE_CONCURRENCY`), `busy` (a claimed job is being
   * captured or waits for the browser) or `free`; exported only by processes that run captures
   * (CONTRACT.md, "Tenancy: fair share and isolation": the autoscaler's signal).
   */
  readonly workerSlots = this.gauge(
    'glimpse_worker_slots',
    'Capture slots of this worker process (CAPTURE_CONCURRENCY), by state (busy, free).',
    ['state'],
  );

  readonly browsersRunning = this.gauge('glimpse_browsers_running', 'Browser processes running in this process.');

  /**
   * 1 when this process's browsers run with Chromium's sandbox, else 0: `CHROMIUM_SANDBOX=off`, a
   * sandbox that could not start (the worker then takes no work), or a process that runs no
   * browser (CONTRACT.md "Tenancy: fair share and isolation", "The browser"). Set by the browser pool.
   */
  readonly browserSandbox = this.gauge(
    'glimpse_browser_sandbox',
    "1 when this process's browsers run with Chromium's sandbox; 0 otherwise (CHROMIUM_SANDBOX=off, the sandbox could not start, or no browser runs here).",
  );

  readonly browserRestarts = this.counter(
    'glimpse_browser_restarts_total',
    'Browsers replaced, by reason (recycle: capture count reached; crash: disconnected or failed).',
    ['reason'],
  );

  readonly webhookAttempts = this.counter(
    'glimpse_webhook_attempts_total',
    'Webhook delivery attempts, by outcome (success: 2xx; http_error: other status; network_error: no answer).',
    ['outcome'],
  );

  readonly quotaRejections = this.counter(
    'glimpse_quota_rejections_total',
    'Requests refused with 429 PLAN_QUOTA_EXCEEDED (monthly plan cap reached).',
  );

  /** Requests refused by the per-second rate of an API key (`RATE_LIMIT_PER_SECOND`). */
  readonly rateLimited = this.counter(
    'glimpse_rate_limited_total',
    'Requests refused with 429 RATE_LIMITED (per-second rate of an API key).',
  );

  /** Requests let through without the per-second rate check because Redis could not answer. */
  readonly rateLimitSkipped = this.counter(
    'glimpse_rate_limit_skipped_total',
    'Requests let through without the per-second rate check because Redis could not answer.',
  );

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    // Every known series from the start, at 0, so rates and alerts work before the first event.
    for (const status of ['done', 'failed']) {
      for (const format of RESULT_FORMATS) this.captures.inc({ status, format }, 0);
    }
    for (const reason of ['recycle', 'crash']) this.browserRestarts.inc({ reason }, 0);
    for (const outcome of ['success', 'http_error', 'network_error'] satisfies WebhookAttemptOutcome[])
      this.webhookAttempts.inc({ outcome }, 0);
    this.browsersRunning.set(0);
    this.browserSandbox.set(0);
  }

  /** A counter named `name` in this registry (docs/operations.md#metrics), with `labelNames` (none by default). */
  private counter<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []): Counter<L> {
    return new Counter({ name, help, labelNames, registers: [this.registry] });
  }

  /** A gauge named `name` in this registry, with `labelNames` (none by default). */
  private gauge<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []): Gauge<L> {
    return new Gauge({ name, help, labelNames, registers: [this.registry] });
  }

  /** A histogram named `name` in this registry, with the upper bounds `buckets` (seconds) and `labelNames`. */
  private histogram<L extends string>(name: string, help: string, buckets: number[], labelNames: readonly L[]): Histogram<L> {
    return new Histogram({ name, help, buckets, labelNames, registers: [this.registry] });
  }

  /** Records one finished webhook attempt: `responseCode` null means the receiver never answered. */
  recordWebhookAttempt(ok: boolean, responseCode: number | null): void {
    const outcome: WebhookAttemptOutcome = ok ? 'success' : responseCode === null ? 'network_error' : 'http_error';
    this.webhookAttempts.inc({ outcome });
  }
}
