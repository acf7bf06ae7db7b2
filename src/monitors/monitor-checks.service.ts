import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { AuthenticatedKey } from '../auth/api-keys.service';
import { CaptureOptionsInput } from '../capture/capture-options';
import { ApiError, ErrorCode } from '../common/api-error';
import { Clock } from '../common/clock';
import { newId } from '../common/ids';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { EventsService } from '../events/events.service';
import { ScreenshotsService } from '../screenshots/screenshots.service';
import { ResultFilesService } from '../storage/result-files.service';
import { ComparisonInterrupted, ImageComparePool } from './image-compare-pool';
import { MonitorCheckLifecycle } from './monitor-check-lifecycle';
import { MonitorCheck } from './monitor-check.entity';
import { Monitor } from './monitor.entity';

/** A comparison that started this long ago without ending (its worker died) is taken again, ms. */
const STALE_COMPARISON_MS = 5 * 60_000;

/** Largest image file read for a comparison, bytes (a capture is bounded by `MAX_IMAGE_PIXELS`). */
const MAX_IMAGE_BYTES = 512 * 1024 * 1024;

/** The `error` of a check whose comparison failed for an internal reason. */
export const COMPARISON_FAILED_MESSAGE = 'internal error: the images could not be compared; the next check will try again';

/** Check states whose image can be a baseline (a check whose baseline image expired becomes the new baseline). */
const STATUSES_WITH_IMAGE = `('baseline', 'unchanged', 'changed')`;

/** Work to run after a transaction committed (queueing a capture, webhook deliveries). */
export type AfterCommit = () => Promise<void>;

/**
 * How a state write of a check (its comparison's claim, renewal and end) is run: `write` is the write,
 * `what` names it in logs. The monitors' processor passes its retried write (`QueueProcessor.write`,
 * `retryStateWrite`: CONTRACT.md "Durability"); {@link unretried} runs it once.
 */
export type StateWrite = <T>(what: string, write: () => Promise<T>) => Promise<T>;

/** A {@link StateWrite} that runs the write once (errors propagate). */
export const unretried: StateWrite = (_what, write) => write();

/** The capture job of a check as the comparison needs it. */
interface EndedJob {
  status: string;
  /** The image's result file (the artifacts table's `image`). */
  image: string | null;
  error: string | null;
}

/**
 * A monitor's checks (CONTRACT.md, "Monitors"): starting one (an ordinary capture job accepted with
 * the monitor's API key, in the caller's transaction), and ending it once its capture job ended
 * ({@link compareJob}): comparison with the baseline image off the request path and off the event
 * loop ({@link ImageComparePool}: worker threads, `COMPARE_CONCURRENCY` at once), the check's status,
 * the monitor's failure count and auto-pause, and the `monitor.changed` / `monitor.failed` events,
 * all in one transaction. The monitors' processor (`MonitorScheduler`) calls {@link compareJob} for
 * every ended capture job and {@link compareEnded} for what a dead worker left.
 */
@Injectable()
export class MonitorChecksService {
  private readonly logger = new Logger(MonitorChecksService.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly screenshots: ScreenshotsService,
    private readonly events: EventsService,
    private readonly files: ResultFilesService,
    private readonly lifecycle: MonitorCheckLifecycle,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly comparisons: ImageComparePool,
  ) {}

  /**
   * Starts a check of `monitor` in `manager`'s transaction: accepts its capture job with `caller`'s
   * quota (the monitor's options, `diff.ignoreSelectors` added to `mask`) and inserts the `pending`
   * check. When the job is refused (429 `PLAN_QUOTA_EXCEEDED` / `TOO_MANY_PENDING_JOBS`): with
   * `refused: 'throw'` the error propagates (nothing written); with `'record'` a `failed` check is
   * stored instead and counted as a failure. Returns the check and the work to run after the commit.
   */
  async start(
    manager: EntityManager,
    monitor: Monitor,
    caller: AuthenticatedKey,
    refused: 'throw' | 'record',
  ): Promise<{ check: MonitorCheck; afterCommit: AfterCommit }> {
    const now = this.clock.now();
    const check = manager.create(MonitorCheck, {
      id: newId('monitorCheck'),
      monitorId: monitor.id,
      accountId: monitor.accountId,
      jobId: null,
      status: 'pending',
      screenshotFile: null,
      baselineCheckId: null,
      baselineFile: null,
      diffFile: null,
      diffRatio: null,
      diffPixels: null,
      regions: [],
      error: null,
      createdAt: now,
      compareStartedAt: null,
      completedAt: null,
    });
    let afterCommit: AfterCommit;
    try {
      const accepted = await this.screenshots.acceptWithin(manager, caller, captureInput(monitor), monitor.url);
      check.jobId = accepted.job.id;
      afterCommit = accepted.afterCommit;
      await manager.insert(MonitorCheck, check);
    } catch (err) {
      const refusal =
        err instanceof ApiError && (err.code === ErrorCode.PLAN_QUOTA_EXCEEDED || err.code === ErrorCode.TOO_MANY_PENDING_JOBS);
      if (!refusal || refused === 'throw') throw err;
      Object.assign(check, { status: 'failed', error: (err as ApiError).message, completedAt: now });
      await manager.insert(MonitorCheck, check);
      afterCommit = await this.countFailure(manager, monitor.id, check);
    }
    await manager.update(Monitor, { id: monitor.id }, { lastCheckAt: now });
    return { check, afterCommit };
  }

  /**
   * Ends the open check of capture job `jobId`, if there is one and no other worker is on it: a failed
   * job fails the check; a done one is compared with the baseline (the pinned check's image, else the
   * last successful check's): none (or its file expired) → `baseline`; a ratio at or above
   * `minChangeRatio` → `changed` with a diff PNG and `monitor.changed`; else `unchanged`. Returns
   * whether it ended a check. The claim and the end are state writes run through `write` (the
   * monitors' processor retries them while PostgreSQL is unreachable, `retryStateWrite`). Throws on
   * database errors (the check stays open for the sweep).
   */
  async compareJob(jobId: string, write: StateWrite = unretried): Promise<boolean> {
    const now = this.clock.now();
    const check = await write(`claim the comparison of ${jobId}`, () =>
      this.lifecycle.claimComparison(jobId, now, new Date(now.getTime() - STALE_COMPARISON_MS)),
    );
    if (!check) return false;
    const monitor = await this.dataSource.manager.findOneBy(Monitor, { id: check.monitorId });
    if (!monitor) return false;
    const [job]: EndedJob[] = await this.dataSource.query(
      `SELECT status, artifacts->>'image' AS image, error FROM screenshot_jobs WHERE id = $1`,
      [jobId],
    );
    if (job.status !== 'done' || !job.image) {
      return this.end(check, { status: 'failed', error: job.error ?? 'the capture failed' }, write);
    }
    try {
      return await this.compareDone(monitor, check, job.image, now, write);
    } catch (err) {
      // The process is stopping: the check stays open, for a later pass (compareEnded).
      if (err instanceof ComparisonInterrupted) throw err;
      this.logger.error(`Comparing check ${check.id} failed`, (err as Error).stack);
      return this.end(check, { status: 'failed', screenshotFile: job.image, error: COMPARISON_FAILED_MESSAGE }, write);
    }
  }

  /**
   * Compares the done capture `file` of `check`, claimed at `claimedAt`, with its baseline and ends the
   * check (see {@link compareJob}). When its turn comes (the comparisons ahead of it can take minutes),
   * the claim is renewed; a check another worker took over meanwhile (the claim was stale) is left to
   * it: false.
   */
  private async compareDone(monitor: Monitor, check: MonitorCheck, file: string, claimedAt: Date, write: StateWrite): Promise<boolean> {
    const readCurrent = async () => {
      const current = await this.files.open(file, MAX_IMAGE_BYTES);
      if (!current?.data) throw new Error(`the image of ${check.id} cannot be read`);
      return current.data;
    };
    const baseline = await this.baselineOf(monitor, check);
    if (!baseline) {
      await readCurrent();
      return this.end(check, { status: 'baseline', screenshotFile: file }, write);
    }
    // The images are read once the comparison has its turn (waiting ones hold no image).
    let takenOver = false;
    const comparison = await this.comparisons.compare(
      async () => {
        const renewed = await write(`renew the comparison of ${check.id}`, () =>
          this.lifecycle.renewComparison(check.id, claimedAt, this.clock.now()),
        );
        if (!renewed) {
          takenOver = true;
          return null;
        }
        const current = await readCurrent();
        const before = await this.files.open(baseline.file, MAX_IMAGE_BYTES);
        return before?.data ? { baseline: before.data, current } : null;
      },
      { threshold: monitor.diff.threshold, minChangeRatio: monitor.diff.minChangeRatio, ignoreRegions: monitor.diff.ignoreRegions },
    );
    if (takenOver) return false;
    // The baseline's image expired: this check's image is the new baseline.
    if (!comparison) return this.end(check, { status: 'baseline', screenshotFile: file }, write);
    const png = comparison.diffPng;
    const diffFile = png ? await this.files.save(Buffer.from(png.buffer, png.byteOffset, png.byteLength), 'png') : null;
    return this.end(
      check,
      {
        status: comparison.changed ? 'changed' : 'unchanged',
        screenshotFile: file,
        baselineCheckId: baseline.checkId,
        baselineFile: baseline.file,
        diffFile,
        diffRatio: comparison.diffRatio,
        diffPixels: comparison.diffPixels,
        regions: comparison.regions,
      },
      write,
    );
  }

  /** The image `check` is compared with: the pinned check's, else the newest earlier successful check's; null: none. */
  private async baselineOf(monitor: Monitor, check: MonitorCheck): Promise<{ checkId: string; file: string } | null> {
    const [row]: { id: string; screenshot_file: string }[] = monitor.baselineCheckId
      ? await this.dataSource.query(`SELECT id, screenshot_file FROM monitor_checks WHERE id = $1 AND screenshot_file IS NOT NULL`, [
          monitor.baselineCheckId,
        ])
      : await this.dataSource.query(
          `SELECT id, screenshot_file FROM monitor_checks
            WHERE monitor_id = $1 AND status IN ${STATUSES_WITH_IMAGE} AND screenshot_file IS NOT NULL AND (created_at, id) < ($2, $3)
            ORDER BY created_at DESC, id DESC LIMIT 1`,
          [monitor.id, check.createdAt, check.id],
        );
    return row ? { checkId: row.id, file: row.screenshot_file } : null;
  }

  /**
   * Ends the still-open `check` with `changes` through its {@link MonitorCheckLifecycle}, with the
   * monitor's bookkeeping and its event in the same transaction: a failure counts towards the
   * auto-pause ({@link countFailure}, `monitor.failed`); a success clears the count, and a change
   * updates `lastChange` and publishes `monitor.changed`. The end is a state write run through
   * `write`. Returns false when the check had already ended.
   */
  private async end(
    check: MonitorCheck,
    changes: Partial<MonitorCheck> & { status: Exclude<MonitorCheck['status'], 'pending'> },
    write: StateWrite,
  ): Promise<boolean> {
    const now = this.clock.now();
    const ended = await write(`end check ${check.id}`, () =>
      this.lifecycle.finish(check.id, { ...changes, completedAt: now }, async (manager, row) => {
        if (row.status === 'failed') return { afterCommit: await this.countFailure(manager, row.monitorId, row) };
        const lastChange =
          row.status === 'changed' ? { checkId: row.id, at: now.toISOString(), diffRatio: row.diffRatio as number } : undefined;
        await manager.update(Monitor, { id: row.monitorId }, { consecutiveFailures: 0, ...(lastChange ? { lastChange } : {}) });
        if (row.status !== 'changed') return { afterCommit: async () => undefined };
        const monitor = (await manager.findOneBy(Monitor, { id: row.monitorId })) as Monitor;
        return this.events.publishWithin(manager, monitor.accountId, 'monitor.changed', {
          monitorId: monitor.id,
          checkId: row.id,
          url: monitor.url,
          diffRatio: row.diffRatio as number,
          diffPixels: row.diffPixels as number,
          regions: row.regions,
          screenshotUrl: this.urlOf(row.screenshotFile),
          baselineUrl: this.urlOf(row.baselineFile),
          diffUrl: this.urlOf(row.diffFile),
        });
      }),
    );
    return ended !== null;
  }

  /**
   * In `manager`'s transaction: counts the failed `check` against its monitor, pausing it (`failing`,
   * no next check) when that makes `MONITOR_PAUSE_AFTER_FAILURES` in a row, and publishes
   * `monitor.failed`. Returns the event's after-commit work.
   */
  private async countFailure(manager: EntityManager, monitorId: string, check: MonitorCheck): Promise<AfterCommit> {
    const [row] = await rowsOf<{ account_id: string; url: string; consecutive_failures: number; paused: boolean }>(
      manager,
      `WITH before AS (SELECT id, enabled FROM monitors WHERE id = $1 FOR UPDATE)
       UPDATE monitors m SET consecutive_failures = m.consecutive_failures + 1,
              enabled = m.enabled AND m.consecutive_failures + 1 < $2,
              paused_reason = CASE WHEN m.enabled AND m.consecutive_failures + 1 >= $2 THEN 'failing' ELSE m.paused_reason END,
              next_check_at = CASE WHEN m.enabled AND m.consecutive_failures + 1 >= $2 THEN NULL ELSE m.next_check_at END
         FROM before WHERE m.id = before.id
       RETURNING m.account_id, m.url, m.consecutive_failures, (before.enabled AND NOT m.enabled) AS paused`,
      [monitorId, this.config.monitors.pauseAfterFailures],
    );
    if (!row) return async () => undefined;
    const { afterCommit } = await this.events.publishWithin(manager, row.account_id, 'monitor.failed', {
      monitorId,
      checkId: check.id,
      url: row.url,
      error: check.error ?? 'the check failed',
      consecutiveFailures: row.consecutive_failures,
      paused: row.paused,
    });
    return afterCommit;
  }

  /**
   * Ends the open checks whose capture job ended but that no worker compared (the worker died between
   * the two): up to `limit` of them, oldest first, each through {@link compareJob} with `write`;
   * returns how many it ended.
   */
  async compareEnded(limit: number, write: StateWrite = unretried): Promise<number> {
    const rows: { job_id: string }[] = await this.dataSource.query(
      `SELECT c.job_id FROM monitor_checks c JOIN screenshot_jobs j ON j.id = c.job_id
        WHERE c.status = 'pending' AND j.status IN ('done', 'failed') AND j.completed_at < $1
          AND (c.compare_started_at IS NULL OR c.compare_started_at < $2)
        ORDER BY c.created_at LIMIT $3`,
      [new Date(this.clock.now().getTime() - 10_000), new Date(this.clock.now().getTime() - STALE_COMPARISON_MS), limit],
    );
    let ended = 0;
    for (const { job_id } of rows) if (await this.compareJob(job_id, write)) ended++;
    return ended;
  }

  /** The public URL of a stored file, or null. */
  urlOf(file: string | null): string | null {
    return file ? this.files.publicUrl(file) : null;
  }
}

/**
 * The rows a statement returns through `manager`: TypeORM answers an `UPDATE`/`DELETE … RETURNING`
 * with `[rows, affected]` and a `SELECT` with the rows.
 */
export async function rowsOf<T>(manager: EntityManager, sql: string, params: unknown[]): Promise<T[]> {
  const result = (await manager.query(sql, params)) as unknown[];
  return (result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number' ? result[0] : result) as T[];
}

/** The capture options of a monitor's check: its options, with `diff.ignoreSelectors` masked (CONTRACT.md, "Monitors"). */
export function captureInput(monitor: Pick<Monitor, 'options' | 'diff'>): CaptureOptionsInput {
  const ignore = monitor.diff.ignoreSelectors;
  if (!ignore.length) return monitor.options;
  return { ...monitor.options, mask: [...new Set([...(monitor.options.mask ?? []), ...ignore])] };
}
