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
  readonly httpRequests = new Counter({
    name: 'glimpse_http_requests_total',
    help: 'HTTP requests answered, by method, route template and status code.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });

  readonly httpRequestDuration = new Histogram({
    name: 'glimpse_http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by method and route template, in seconds.',
    labelNames: ['method', 'route'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  /** Finished capture attempts, by `status` (`done`, `failed`) and image `format`. */
  readonly captures = new Counter({
    name: 'glimpse_captures_total',
    help: 'Capture attempts finished, by status (done, failed) and format.',
    labelNames: ['status', 'format'] as const,
    registers: [this.registry],
  });

  readonly captureDuration = new Histogram({
    name: 'glimpse_capture_duration_seconds',
    help: 'Duration of one capture attempt (browser lease, navigation, screenshot, storage), in seconds.',
    labelNames: ['status'] as const,
    buckets: [0.25, 0.5, 1, 2, 3, 5, 8, 13, 21, 34, 60, 120],
    registers: [this.registry],
  });

  /** Jobs in each queue by Bull state; set by the collector registered by `QueueMetricsCollector`. */
  readonly queueJobs = new Gauge({
    name: 'glimpse_queue_jobs',
    help: 'Jobs in each queue by state (waiting, active, delayed, failed, completed), read at scrape time.',
    labelNames: ['queue', 'state'] as const,
    registers: [this.registry],
  });

  /**
   * Capture slots of this worker process (`CAPTURE_CONCURRENCY`), `busy` (a claimed job is being
   * captured or waits for the browser) or `free`; exported only by processes that run captures
   * (CONTRACT.md, "Tenancy: fair share and isolation": the autoscaler's signal).
   */
  readonly workerSlots = new Gauge({
    name: 'glimpse_worker_slots',
    help: 'Capture slots of this worker process (CAPTURE_CONCURRENCY), by state (busy, free).',
    labelNames: ['state'] as const,
    registers: [this.registry],
  });

  readonly browsersRunning = new Gauge({
    name: 'glimpse_browsers_running',
    help: 'Browser processes running in this process.',
    registers: [this.registry],
  });

  /**
   * 1 when this process's browsers run with Chromium's sandbox, else 0: `CHROMIUM_SANDBOX=off`, a
   * sandbox that could not start (the worker then takes no work), or a process that runs no
   * browser (CONTRACT.md "Tenancy: fair share and isolation", "The browser"). Set by the browser pool.
   */
  readonly browserSandbox = new Gauge({
    name: 'glimpse_browser_sandbox',
    help: "1 when this process's browsers run with Chromium's sandbox; 0 otherwise (CHROMIUM_SANDBOX=off, the sandbox could not start, or no browser runs here).",
    registers: [this.registry],
  });

  readonly browserRestarts = new Counter({
    name: 'glimpse_browser_restarts_total',
    help: 'Browsers replaced, by reason (recycle: capture count reached; crash: disconnected or failed).',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly webhookAttempts = new Counter({
    name: 'glimpse_webhook_attempts_total',
    help: 'Webhook delivery attempts, by outcome (success: 2xx; http_error: other status; network_error: no answer).',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly quotaRejections = new Counter({
    name: 'glimpse_quota_rejections_total',
    help: 'Requests refused with 429 PLAN_QUOTA_EXCEEDED (monthly plan cap reached).',
    registers: [this.registry],
  });

  /** Requests refused by the per-second rate of an API key (`RATE_LIMIT_PER_SECOND`). */
  readonly rateLimited = new Counter({
    name: 'glimpse_rate_limited_total',
    help: 'Requests refused with 429 RATE_LIMITED (per-second rate of an API key).',
    registers: [this.registry],
  });

  /** Requests let through without the per-second rate check because Redis could not answer. */
  readonly rateLimitSkipped = new Counter({
    name: 'glimpse_rate_limit_skipped_total',
    help: 'Requests let through without the per-second rate check because Redis could not answer.',
    registers: [this.registry],
  });

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

  /** Records one finished webhook attempt: `responseCode` null means the receiver never answered. */
  recordWebhookAttempt(ok: boolean, responseCode: number | null): void {
    const outcome: WebhookAttemptOutcome = ok ? 'success' : responseCode === null ? 'network_error' : 'http_error';
    this.webhookAttempts.inc({ outcome });
  }
}
