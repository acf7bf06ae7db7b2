import { InjectQueue } from '@nestjs/bull';
import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Queue } from 'bull';
import { DataSource } from 'typeorm';
import { ApiKeysService } from '../auth/api-keys.service';
import { Clock } from '../common/clock';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { EventsService } from '../events/events.service';
import { PeriodicJob, QueueProcessor } from '../queue/queue-processor';
import { MONITOR_QUEUE } from '../queue/queues';
import { ResultFilesService } from '../storage/result-files.service';
import { AfterCommit, MonitorChecksService, rowsOf, StateWrite } from './monitor-checks.service';
import { nextCheckAt } from './monitor-schedule';
import { Monitor } from './monitor.entity';

/** Due monitors claimed per transaction of a tick (all of one API key, see {@link MonitorScheduler.claimDue}). */
const CLAIM_BATCH = 20;

/** Checks are kept this long (CONTRACT.md, "Monitors"), days. */
export const CHECK_RETENTION_DAYS = 90;

/** Ticks between two housekeeping passes (revoked keys, old checks, stranded comparisons). */
const HOUSEKEEPING_EVERY_TICKS = 15;

/** Bull job name of the schedule's tick (a periodic job of the `monitors` queue). */
export const MONITOR_TICK_JOB = 'monitor-tick';
/** Bull job name of the monitors' housekeeping (a periodic job of the `monitors` queue). */
export const MONITOR_HOUSEKEEPING_JOB = 'monitor-housekeeping';

/**
 * The monitors' processor (CONTRACT.md, "Monitors"; docs/monitors.md, "Schedule"), a
 * {@link QueueProcessor} of the `monitors` queue with two {@link PeriodicJob}s, registered with Bull
 * and re-registered by the reconciler like the other periodic jobs:
 * - the tick, every `MONITOR_TICK_MS` (one worker per interval, however many run): claims due
 *   monitors ({@link claimDue}) and starts their checks. The schedule lives in PostgreSQL only
 *   (`next_check_at`), so with several workers each slot runs once, and slots missed while no worker
 *   ran run once when one is back;
 * - the housekeeping ({@link housekeeping}), every {@link HOUSEKEEPING_EVERY_TICKS} ticks and once
 *   at start-up.
 * It also hears of every ended capture job (an event sink of `screenshot.*` events, after their
 * commit) and compares a monitor's check ({@link MonitorChecksService.compareJob}), its claim and end
 * retried while PostgreSQL is unreachable ({@link QueueProcessor.write}).
 */
@Injectable()
export class MonitorScheduler extends QueueProcessor implements OnModuleInit {
  /** The state writes of a check's comparison, retried ({@link QueueProcessor.write}). */
  private readonly retried: StateWrite = (what, write) => this.write(what, write);

  constructor(
    @InjectQueue(MONITOR_QUEUE) protected readonly queue: Queue,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly checks: MonitorChecksService,
    private readonly apiKeys: ApiKeysService,
    private readonly files: ResultFilesService,
    private readonly events: EventsService,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    super();
  }

  /** Hears of every ended capture job: a monitor's is compared after the commit, without holding up the worker. */
  onModuleInit(): void {
    this.events.registerSink({
      fanOut: (event) => {
        if (event.type !== 'screenshot.completed' && event.type !== 'screenshot.failed') return Promise.resolve();
        const jobId = (event.data as { screenshotId: string }).screenshotId;
        return Promise.resolve(async () => {
          void this.checks
            .compareJob(jobId, this.retried)
            .catch((err) => this.logger.error(`Could not compare the check of ${jobId}`, (err as Error).stack));
        });
      },
    });
  }

  protected override periodicJobs(): PeriodicJob[] {
    const everyMs = this.config.monitors.tickMs;
    return [
      { jobName: MONITOR_TICK_JOB, everyMs, run: () => this.tick() },
      { jobName: MONITOR_HOUSEKEEPING_JOB, everyMs: everyMs * HOUSEKEEPING_EVERY_TICKS, run: () => this.housekeeping(), atStart: true },
    ];
  }

  /** One tick: claims and starts the due checks batch by batch; returns how many monitors it claimed. */
  async tick(): Promise<number> {
    let claimed = 0;
    for (let batch; (batch = await this.claimDue(CLAIM_BATCH)) > 0;) claimed += batch;
    return claimed;
  }

  /**
   * In one transaction: locks up to `limit` enabled monitors whose `next_check_at` has come, all of
   * the API key of the longest-due one (`FOR UPDATE SKIP LOCKED`: another worker's claims are
   * skipped, never waited for, never run twice), moves each to its next slot ({@link nextCheckAt}:
   * missed slots collapse into one) and starts its check, unless its previous check is still open
   * (that slot is skipped). A monitor whose API key was revoked is paused (`key_revoked`) instead.
   * After the commit the capture jobs are queued. Returns how many monitors it claimed.
   *
   * One key per transaction: each check's acceptance locks its key's quota rows, then its account's
   * open-work row, until the commit; two workers' batches of several keys took those locks in
   * crossing orders and deadlocked (the tick failed, its slots waited for the next one).
   */
  async claimDue(limit: number): Promise<number> {
    const now = this.clock.now();
    const { claimed, after } = await this.dataSource.transaction(async (manager) => {
      const due = await manager
        .createQueryBuilder(Monitor, 'm')
        .where('m.enabled AND m.next_check_at <= :now', { now })
        .andWhere(
          `m.api_key_id = (SELECT o.api_key_id FROM monitors o WHERE o.enabled AND o.next_check_at <= :now
                            ORDER BY o.next_check_at LIMIT 1 FOR UPDATE SKIP LOCKED)`,
          { now },
        )
        .orderBy('m.next_check_at', 'ASC')
        .limit(limit)
        .setLock('pessimistic_write')
        .setOnLocked('skip_locked')
        .getMany();
      const after: AfterCommit[] = [];
      for (const monitor of due) {
        const caller = await this.apiKeys.callerFor(monitor.accountId, monitor.apiKeyId);
        if (!caller) {
          await manager.update(Monitor, { id: monitor.id }, { enabled: false, pausedReason: 'key_revoked', nextCheckAt: null });
          continue;
        }
        await manager.update(Monitor, { id: monitor.id }, { nextCheckAt: nextCheckAt(monitor.schedule, now) });
        const [open]: unknown[] = await manager.query(`SELECT 1 FROM monitor_checks WHERE monitor_id = $1 AND status = 'pending' LIMIT 1`, [
          monitor.id,
        ]);
        if (open) continue;
        const started = await this.checks.start(manager, monitor, caller, 'record');
        after.push(started.afterCommit);
      }
      return { claimed: due.length, after };
    });
    for (const run of after) await run().catch((err) => this.logger.error('Could not queue a monitor check', (err as Error).stack));
    return claimed;
  }

  /**
   * Pauses the monitors of revoked API keys (`key_revoked`), ends checks whose comparison no worker
   * ran (their state writes retried, {@link QueueProcessor.write}), and deletes checks older than
   * {@link CHECK_RETENTION_DAYS} with their diff images.
   */
  async housekeeping(): Promise<void> {
    await this.dataSource.query(
      `UPDATE monitors SET enabled = false, paused_reason = 'key_revoked', next_check_at = NULL
        WHERE enabled AND api_key_id IN (SELECT id FROM api_keys WHERE revoked_at IS NOT NULL)`,
    );
    await this.checks.compareEnded(50, this.retried);
    const cutoff = new Date(this.clock.now().getTime() - CHECK_RETENTION_DAYS * 86_400_000);
    const purged = await rowsOf<{ diff_file: string | null }>(
      this.dataSource.manager,
      `DELETE FROM monitor_checks WHERE id IN (SELECT id FROM monitor_checks WHERE created_at < $1 LIMIT 500) RETURNING diff_file`,
      [cutoff],
    );
    for (const { diff_file } of purged) if (diff_file) await this.files.deleteFile(diff_file).catch(() => undefined);
  }
}
