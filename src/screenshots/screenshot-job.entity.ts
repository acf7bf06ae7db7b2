import { Column, CreateDateColumn, Entity, Index } from 'typeorm';
import { KeyOwnedWork } from '../auth/key-owned-work.entity';
import { TimestampColumn } from '../common/timestamp-column';
import { CaptureOptions, CaptureOptionsInput, DEFAULT_CAPTURE_OPTIONS } from '../capture/capture-options';
import type { StoredArtifacts } from '../results/artifacts';
import type { JobFormat } from '../results/result-formats';

/** Job states (spec section 3.1): `pending` → `processing` → `done` | `failed`, never back. */
export const JOB_STATUSES = ['pending', 'processing', 'done', 'failed'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** Where a job's page comes from: a URL to load, or an uploaded HTML document (`screenshot_uploads`). */
export const JOB_SOURCES = ['url', 'upload'] as const;
export type JobSource = (typeof JOB_SOURCES)[number];

/**
 * The order of a job within its account's queued work (CONTRACT.md, "Tenancy: fair share and
 * isolation"; docs/durability.md, "Fair share"), decided where the work is accepted: `interactive`
 * (someone waits for it: render-link misses, `Prefer: wait`, MCP captures and reads) goes ahead of
 * `standard` (a plain `POST /v1/screenshot` or upload), which goes ahead of `batch` (batches, monitor
 * checks). Stored as the smallint `queue_class`, lower first.
 */
export const QUEUE_CLASSES = { interactive: 0, standard: 1, batch: 2 } as const;
export type QueueClass = keyof typeof QUEUE_CLASSES;

/**
 * The columns that describe a job's image, shown as they are both on the job object and in
 * `screenshot.completed` (CONTRACT.md, "Screenshot jobs" and "Webhooks"; `publicColumns`).
 */
export const JOB_IMAGE_COLUMNS = ['format', 'width', 'height', 'fullPage', 'clipped', 'targetStatus'] as const;

/** One screenshot job: the capture options, its state and, once done, its result file. */
@Entity({ name: 'screenshot_jobs' })
@Index(['accountId', 'createdAt'])
// The reconciler pages through pending jobs by id (src/queue/durable-queue.service.ts).
@Index('IDX_screenshot_jobs_pending_id', ['id'], { where: `status = 'pending'` })
// The done jobs of an account by capture-cache key (CONTRACT.md, "Capture options": cache).
@Index('IDX_screenshot_jobs_cache', ['accountId', 'cacheKey', 'completedAt'], { where: `"status" = 'done'` })
// The claim's order (account, class, age) and the accounts with queued work (docs/durability.md, "Fair share").
@Index('IDX_screenshot_jobs_queued', ['accountId', 'queueClass', 'createdAt', 'id'], { where: `status = 'pending'` })
// An account's jobs running now (ACCOUNT_MAX_RUNNING), and the job a redelivered queue entry had claimed.
@Index('IDX_screenshot_jobs_running', ['accountId'], { where: `status = 'processing'` })
@Index('IDX_screenshot_jobs_claimed_by', ['claimedBy'], { where: `status = 'processing'` })
// The captures ended lately: the throughput behind Retry-After (src/acceptance/capture-backlog.ts).
@Index('IDX_screenshot_jobs_completed_at', ['completedAt'], { where: 'completed_at IS NOT NULL' })
// Finds the results to delete at expiry (housekeeping sweep) without scanning every job.
@Index('IDX_screenshot_jobs_result_expiry', ['completedAt'], { where: `"artifacts" <> '{}'::jsonb AND "result_deleted_at" IS NULL` })
export class ScreenshotJob extends KeyOwnedWork {
  @Index()
  @Column({ type: 'varchar', length: 16 })
  status: JobStatus;

  /** The page to capture; for an upload, `upload:<sha256 of the document>`. */
  @Column({ name: 'target_url', type: 'text' })
  targetUrl: string;

  @Column({ type: 'varchar', length: 8, default: 'url' })
  source: JobSource;

  /** Viewport width, px. */
  @Column({ type: 'int' })
  width: number;

  /** Viewport height, px. */
  @Column({ type: 'int' })
  height: number;

  @Column({ name: 'full_page', type: 'boolean' })
  fullPage: boolean;

  @Column({ type: 'varchar', length: 8 })
  format: JobFormat;

  /** Wait after load, ms. */
  @Column({ name: 'delay_ms', type: 'int' })
  delayMs: number;

  /**
   * Every capture option of the job, resolved (defaults applied), as the engine uses them; the
   * columns above repeat the ones the API shows. Null on jobs created before capture options were
   * stored (migration CaptureOptions1795218700000; read them with {@link jobCaptureOptions}).
   */
  @Column({ type: 'jsonb', nullable: true })
  options: CaptureOptions | null;

  /** The options as the customer gave them (public names, no defaults): the job's `options` echo. Null on jobs before migration CaptureOptionsEcho. */
  @Column({ name: 'requested_options', type: 'jsonb', nullable: true })
  requestedOptions: CaptureOptionsInput | null;

  /** Hex SHA-256 of the target and the options that shape the result (`captureCacheKey`); the capture cache looks jobs up by it. */
  @Column({ name: 'cache_key', type: 'varchar', length: 64, nullable: true })
  cacheKey: string | null;

  /** True when the job reused another job's capture (capture cache) instead of capturing. */
  @Column({ type: 'boolean', default: false })
  cached: boolean;

  /** True when the full-page capture was cut at the height cap (16,384 px). */
  @Column({ type: 'boolean', default: false })
  clipped: boolean;

  /** HTTP status of the page's main document (CONTRACT.md, "Capture options, second set"); null for uploads and before the page answered. */
  @Column({ name: 'target_status', type: 'smallint', nullable: true })
  targetStatus: number | null;

  /**
   * The job's result artifacts by kind (the artifacts table, src/results/artifacts.ts: the image's and
   * thumbnail's file names, the extracted content's files and metadata, where `storage` delivered it);
   * `{}` until done, and for a failed job.
   */
  @Column({ type: 'jsonb', default: () => "'{}'" })
  artifacts: StoredArtifacts;

  @Column({ type: 'text', nullable: true })
  error: string | null;

  /** Its order within the account's queued work ({@link QUEUE_CLASSES}: 0 interactive, 1 standard, 2 batch). */
  @Column({ name: 'queue_class', type: 'smallint', default: QUEUE_CLASSES.standard })
  queueClass: number;

  /** Id of the queue entry that claimed the job last (a redelivered entry claims it again); null until claimed. */
  @Column({ name: 'claimed_by', type: 'varchar', length: 40, nullable: true })
  claimedBy: string | null;

  /** The crawl this job captures a page of (CONTRACT.md, "Crawls"); null for every other job. */
  @Index('IDX_screenshot_jobs_crawl', { where: 'crawl_id IS NOT NULL' })
  @Column({ name: 'crawl_id', type: 'varchar', length: 40, nullable: true })
  crawlId: string | null;

  /** Capture attempts started (a worker crash can cause a second one). */
  @Column({ type: 'int', default: 0 })
  attempts: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @TimestampColumn('started_at', { nullable: true })
  startedAt: Date | null;

  @TimestampColumn('completed_at', { nullable: true })
  completedAt: Date | null;

  /** When the housekeeping sweep deleted the result file, past `RESULT_TTL_DAYS`; the URL is 404 since. */
  @TimestampColumn('result_deleted_at', { nullable: true })
  resultDeletedAt: Date | null;
}

/**
 * The resolved capture options of a job: its `options` value over its option columns over the defaults
 * (older rows lack `options`, or lack options added since they were created).
 */
export function jobCaptureOptions(job: ScreenshotJob): CaptureOptions {
  return {
    ...DEFAULT_CAPTURE_OPTIONS,
    width: job.width,
    height: job.height,
    fullPage: job.fullPage,
    format: job.format,
    delayMs: job.delayMs,
    ...job.options,
  };
}
