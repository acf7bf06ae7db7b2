import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { PublishedWithin, WorkLifecycle } from '../queue/work-lifecycle';
import { MonitorCheck } from './monitor-check.entity';

/** The states a check ends from. */
const OPEN: MonitorCheck['status'][] = ['pending'];

/**
 * The one owner of a monitor check's state (CONTRACT.md, "Monitors"; ARCHITECTURE.md, "Work
 * lifecycle"): `pending` → `baseline` | `unchanged` | `changed` | `failed`, never back, each end one
 * conditional `UPDATE … RETURNING` in the transaction that also stores its event and the monitor's
 * bookkeeping ({@link WorkLifecycle.end}), so a check never ends twice, whoever compares it. The
 * comparison of a still-`pending` check is claimed (and renewed) the same way, through
 * `compare_started_at`: one worker compares a check at a time, and a claim older than the stale limit
 * is taken over. Callers wrap each call in `retryStateWrite` (the monitors' processor does).
 */
@Injectable()
export class MonitorCheckLifecycle extends WorkLifecycle<MonitorCheck> {
  constructor(@InjectRepository(MonitorCheck) checks: Repository<MonitorCheck>) {
    super(checks);
  }

  /**
   * Claims the comparison of the `pending` check of capture job `jobId` at `at`, when that job ended
   * (`done` or `failed`) and no comparison holds the check (none started, or one started before
   * `staleBefore`, its worker died). Returns the claimed check, or null (no such check, already
   * ended, job still open, or compared elsewhere). Throws what the database throws.
   */
  async claimComparison(jobId: string, at: Date, staleBefore: Date): Promise<MonitorCheck | null> {
    // One statement keyed by the job: it runs for every ended capture job, most of which have no check.
    const [row] = await this.statementRows(
      `UPDATE monitor_checks SET compare_started_at = $2
        WHERE job_id = $1 AND status = 'pending' AND (compare_started_at IS NULL OR compare_started_at < $3)
          AND EXISTS (SELECT 1 FROM screenshot_jobs j WHERE j.id = $1 AND j.status IN ('done', 'failed'))
        RETURNING *`,
      [jobId, at, staleBefore],
    );
    return row ? this.entityOf(row) : null;
  }

  /**
   * Renews the comparison claim of check `id` made at `claimedAt` to `at`; null when the check ended
   * or another worker took the claim over meanwhile (its `compare_started_at` moved). Throws what the
   * database throws.
   */
  renewComparison(id: string, claimedAt: Date, at: Date): Promise<MonitorCheck | null> {
    return this.transition(id, OPEN, { compareStartedAt: at }, undefined, (param) => `compare_started_at = ${param(claimedAt)}`);
  }

  /**
   * Ends the still-`pending` check `id` with `changes` (its end state and results); `publish` runs in
   * the same transaction with the ended row (the monitor's bookkeeping and event). Returns the ended
   * check, or null when it had already ended. Throws what the database throws (nothing written then).
   */
  finish(
    id: string,
    changes: Partial<MonitorCheck> & { status: Exclude<MonitorCheck['status'], 'pending'>; completedAt: Date },
    publish: (manager: EntityManager, check: MonitorCheck) => Promise<PublishedWithin>,
  ): Promise<MonitorCheck | null> {
    return this.end(id, OPEN, changes, publish);
  }
}
