/** Bull queue names; payloads carry ids only, state lives in PostgreSQL (ARCHITECTURE.md). */
export const CAPTURE_QUEUE = 'captures';
export const HOUSEKEEPING_QUEUE = 'housekeeping';
export const WEBHOOK_QUEUE = 'webhook-deliveries';
/** Deletion of rows past their retention (its own queue: one Bull queue, one owner of its job names). */
export const RETENTION_QUEUE = 'retention';
/** Browser session runs (CONTRACT.md, "Browser session runs"). */
export const RUN_QUEUE = 'runs';
/** Monitors' schedule and housekeeping (CONTRACT.md, "Monitors"). */
export const MONITOR_QUEUE = 'monitors';

/** Crawls (CONTRACT.md, "Crawls"): one queue job per crawl, held by the worker driving it. */
export const CRAWL_QUEUE = 'crawls';

/** Job names within the queues. */
export const CAPTURE_JOB = 'capture';
/** One browser session run. */
export const RUN_JOB = 'run';
/** One crawl, driven from discovery to its bundle. */
export const CRAWL_JOB = 'crawl';
export const HOUSEKEEPING_SWEEP_JOB = 'sweep';
/** One retention run (retention queue). */
export const RETENTION_JOB = 'retention';
/** One attempt of one webhook delivery. */
export const WEBHOOK_ATTEMPT_JOB = 'attempt';
/** Periodic recovery of webhook deliveries whose attempt was lost (worker died, enqueue failed). */
export const WEBHOOK_SWEEP_JOB = 'webhook-sweep';

/** Payload of a capture queue job: the screenshot job id only. */
export interface CapturePayload {
  jobId: string;
}

/**
 * Payload of a run queue job: the run id and, only here (never in PostgreSQL, never logged), the
 * values of its sensitive `fill` steps by step index. The queue entry is removed when the run ends.
 */
export interface RunPayload {
  runId: string;
  /** The values sealed (src/runs/sealed-run-values.ts): what new entries carry. */
  sealedValues?: string;
  /** Unsealed values of an entry queued before sealing existed. */
  sensitiveValues?: Record<number, string>;
}

/** Payload of a crawl queue job: the crawl id only. */
export interface CrawlPayload {
  crawlId: string;
}

/** Payload of a webhook attempt job: the delivery id only. */
export interface WebhookAttemptPayload {
  deliveryId: string;
}

/** Injection token: true when this process runs the queue processors (`WORKER_MODE=inline` or `worker.ts`). */
export const RUN_PROCESSORS = Symbol('RUN_PROCESSORS');
