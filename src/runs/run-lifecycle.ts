import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, In, IsNull, LessThan, Repository } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { Clock } from '../common/clock';
import { EventsService } from '../events/events.service';
import { notifyCancelRequested } from '../queue/work-ended';
import { WorkLifecycle } from '../queue/work-lifecycle';
import { ResultFilesService } from '../storage/result-files.service';
import { RunStep } from './run-steps';
import { Run, RunStatus } from './run.entity';

/** How a run ends: the fields written with its final status. */
export type RunEnding = Partial<
  Pick<
    Run,
    | 'finalUrl'
    | 'pageTitle'
    | 'videoFile'
    | 'consoleErrorCount'
    | 'networkErrorCount'
    | 'consoleErrors'
    | 'networkErrors'
    | 'stepResults'
    | 'savedProfileId'
  >
> &
  ({ status: 'completed' } | { status: 'failed'; finalizationError: string; failure: NonNullable<Run['failure']> });

/** What {@link RunLifecycle.cancel} did. */
export type CancelOutcome =
  /** The run was `pending` and ended `failed` (stage `canceled`) now. */
  | { outcome: 'ended'; run: Run }
  /** The run is `running`: its worker was asked to stop and ends it. */
  | { outcome: 'requested'; run: Run }
  /** The run had already ended (it is returned as it is). */
  | { outcome: 'already-ended'; run: Run };

/** States a run can still end from. */
const OPEN_RUN_STATUSES: RunStatus[] = ['pending', 'running'];

/**
 * {@link RunLifecycle.otherAccountsFirst}: whether the account of the pending run `$1` was served
 * (`run_turns`) after some other account with a pending run (IDX_runs_pending_by_account), or that one
 * never was.
 */
const OTHER_ACCOUNTS_FIRST_SQL = `
  SELECT EXISTS (
    SELECT 1
      FROM runs mine
      JOIN run_turns mine_turn ON mine_turn.account_id = mine.account_id
      JOIN runs other ON other.status = 'pending' AND other.account_id <> mine.account_id
      LEFT JOIN run_turns other_turn ON other_turn.account_id = other.account_id
     WHERE mine.id = $1 AND mine.status = 'pending'
       AND (other_turn.served_at IS NULL OR other_turn.served_at < mine_turn.served_at)
  ) AS first`;

/** {@link RunLifecycle.claim}: records that the account `$1` had a run claimed now (its turn among runs). */
const RECORD_TURN_SQL = `
  INSERT INTO run_turns (account_id, served_at) VALUES ($1, clock_timestamp())
  ON CONFLICT (account_id) DO UPDATE SET served_at = EXCLUDED.served_at`;

/** Every step of a run that never started, as `skipped`. */
export function skippedSteps(steps: RunStep[]): Run['stepResults'] {
  return steps.map((step, index) => ({
    index,
    action: step.action,
    status: 'skipped',
    durationMs: 0,
    error: null,
    screenshotFile: null,
    result: null,
  }));
}

/**
 * The one owner of a run's state (CONTRACT.md, "Browser session runs": `pending` → `running` →
 * `completed` | `failed`, never back). Each transition is one conditional `UPDATE … RETURNING`
 * guarded by the current state ({@link WorkLifecycle}), so a run never ends twice and never goes
 * back; the call that ends a run stores its `run.completed` or `run.failed` event (spec section 6.1,
 * CONTRACT.md "Browser session runs", Events) in the same transaction. Workers wrap every call in
 * `retryStateWrite` (through their `WorkProcessor`).
 */
@Injectable()
export class RunLifecycle extends WorkLifecycle<Run> {
  constructor(
    @InjectRepository(Run) runs: Repository<Run>,
    private readonly files: ResultFilesService,
    private readonly events: EventsService,
    private readonly clock: Clock,
  ) {
    super(runs);
  }

  /**
   * Moves a `pending` run to `running` for a worker, counting the attempt, records the account's turn
   * (`run_turns`, in the same transaction; see {@link otherAccountsFirst}) and returns it. Returns null
   * when the run is unknown or ended; a run found `running` was claimed before by a worker that died
   * mid-run (its queue job was redelivered), so it is ended `failed` at stage `worker` rather than run
   * again (its steps may have had effects, e.g. a purchase).
   */
  async claim(runId: string): Promise<Run | null> {
    const run = await this.rows.manager.transaction(async (manager) => {
      const claimed = await this.transition(
        runId,
        ['pending'],
        { status: 'running', startedAt: this.clock.now(), attempts: () => 'attempts + 1' },
        manager,
      );
      if (claimed) await manager.query(RECORD_TURN_SQL, [claimed.accountId]);
      return claimed;
    });
    if (run) return run;
    await this.failStranded(runId);
    return null;
  }

  /**
   * Whether another account should have a run claimed before the `pending` run `runId` (fair share,
   * CONTRACT.md "Tenancy: fair share and isolation"; docs/durability.md, "Fair share"): true when an
   * account other than the run's has a `pending` run and had its last run claimed less recently than
   * the run's account (`run_turns`; never served counts as least recently). An account never served
   * itself never waits. One statement; throws what the database throws.
   */
  async otherAccountsFirst(runId: string): Promise<boolean> {
    const [row] = await this.statementRows<{ first: boolean }>(OTHER_ACCOUNTS_FIRST_SQL, [runId]);
    return row?.first === true;
  }

  /**
   * Ends a run still in one of `from` (default: `pending` or `running`) with `ending`, and stores its
   * `run.completed` or `run.failed` event in the same transaction, so a run that reads ended always
   * has its event; the webhook deliveries are queued after the commit. Returns the ended run, or null
   * when it was not in one of `from` (nothing is published then). Throws what the database throws
   * (nothing is written then).
   */
  finish(runId: string, ending: RunEnding, from: RunStatus[] = OPEN_RUN_STATUSES): Promise<Run | null> {
    const changes = { ...ending, completedAt: this.clock.now() } as QueryDeepPartialEntity<Run>;
    return this.end(runId, from, changes, (manager, run) => this.publishEnd(manager, run));
  }

  /**
   * Ends a `running` run whose worker stopped (crash, lost queue job) as `failed` at stage `worker`:
   * the steps that never ended are `skipped`, the first of them is the failure's `stepIndex`. Returns
   * the ended run, or null when it was not `running`.
   */
  async failStranded(runId: string): Promise<Run | null> {
    const run = await this.rows.findOneBy({ id: runId, status: 'running' });
    if (!run) return null;
    const done = new Set(run.stepResults.map((s) => s.index));
    const stepResults = [...run.stepResults, ...skippedSteps(run.steps).filter((s) => !done.has(s.index))];
    const stepIndex = stepResults.find((s) => s.status === 'skipped')?.index ?? null;
    return this.finish(
      runId,
      { status: 'failed', finalizationError: 'the worker stopped during the run', failure: { stage: 'worker', stepIndex }, stepResults },
      ['running'],
    );
  }

  /**
   * Cancels a run (CONTRACT.md, "Browser session runs", cancel): a `pending` run ends `failed` with
   * stage `canceled` and every step `skipped`; a `running` one gets `cancelRequestedAt`, announced in
   * the same transaction on `LISTEN/NOTIFY` ({@link notifyCancelRequested}) to the worker running it,
   * which ends it once what was recorded is stored; an ended one is left as it is. Each step is one
   * guarded `UPDATE … RETURNING`; only when neither applied is the run read again.
   */
  async cancel(run: Pick<Run, 'id' | 'status' | 'steps'>): Promise<CancelOutcome> {
    if (run.status === 'pending') {
      const ended = await this.finish(
        run.id,
        {
          status: 'failed',
          finalizationError: 'the run was canceled',
          failure: { stage: 'canceled', stepIndex: null },
          stepResults: skippedSteps(run.steps),
        },
        ['pending'],
      );
      if (ended) return { outcome: 'ended', run: ended };
    }
    const requested = await this.rows.manager.transaction(async (manager) => {
      const row = await this.transition(run.id, ['running'], { cancelRequestedAt: this.clock.now() }, manager);
      if (row) await notifyCancelRequested(manager, row.id);
      return row;
    });
    if (requested) return { outcome: 'requested', run: requested };
    const now = await this.rows.findOneByOrFail({ id: run.id });
    return OPEN_RUN_STATUSES.includes(now.status) ? { outcome: 'requested', run: now } : { outcome: 'already-ended', run: now };
  }

  /** Whether the customer asked to cancel this run. */
  async cancelRequested(runId: string): Promise<boolean> {
    const run = await this.rows.findOne({ select: { id: true, cancelRequestedAt: true }, where: { id: runId } });
    return Boolean(run?.cancelRequestedAt);
  }

  /** Records the outcomes of the steps that ended so far, while the run is `running` (polling shows progress). */
  async progress(runId: string, stepResults: Run['stepResults']): Promise<void> {
    await this.rows.update({ id: runId, status: 'running' }, { stepResults });
  }

  /** Up to 1,000 ids of `running` runs started more than their own budget plus `slackMs` ago (their worker is gone). */
  async strandedRunning(slackMs: number): Promise<string[]> {
    const running: { id: string }[] = await this.rows
      .createQueryBuilder('run')
      .select('run.id', 'id')
      .where(`run.status = 'running'`)
      .andWhere(`run.started_at < :now::timestamptz - make_interval(secs => (run.timeout_ms + :slackMs) / 1000.0)`, {
        now: this.clock.now(),
        slackMs,
      })
      .limit(1000)
      .getRawMany();
    return running.map((r) => r.id);
  }

  /**
   * Deletes the video and step screenshots of runs that ended before `before` (past
   * `RESULT_TTL_DAYS`), at most `limit` runs per call, and marks them (`resultsDeletedAt`); returns
   * how many files were deleted.
   */
  async purgeExpiredFiles(before: Date, limit: number): Promise<number> {
    const expired = await this.rows.find({
      select: { id: true, videoFile: true, stepResults: true },
      where: { status: In(['completed', 'failed']), resultsDeletedAt: IsNull(), completedAt: LessThan(before) },
      take: limit,
    });
    let deleted = 0;
    for (const run of expired) {
      const names = [run.videoFile, ...run.stepResults.map((s) => s.screenshotFile)].filter((n): n is string => Boolean(n));
      for (const name of names) await this.files.deleteFile(name);
      deleted += names.length;
      await this.rows.update({ id: run.id }, { resultsDeletedAt: this.clock.now() });
    }
    return deleted;
  }

  /** Stores the run's `run.completed` / `run.failed` event (CONTRACT.md, "Browser session runs", Events) in `manager`'s transaction. */
  private publishEnd(manager: EntityManager, run: Run): ReturnType<EventsService['publishWithin']> {
    const durationMs = run.startedAt && run.completedAt ? run.completedAt.getTime() - run.startedAt.getTime() : 0;
    const common = {
      runId: run.id,
      videoUrl: run.videoFile ? this.files.publicUrl(run.videoFile) : null,
      consoleErrorCount: run.consoleErrorCount,
      networkErrorCount: run.networkErrorCount,
      stepCount: run.steps.length,
      durationMs,
    };
    if (run.status === 'completed') {
      return this.events.publishWithin(manager, run.accountId, 'run.completed', {
        ...common,
        status: 'completed',
        finalUrl: run.finalUrl ?? run.url,
        pageTitle: run.pageTitle ?? '',
      });
    }
    return this.events.publishWithin(manager, run.accountId, 'run.failed', {
      ...common,
      status: 'failed',
      finalUrl: run.finalUrl,
      pageTitle: run.pageTitle,
      finalizationError: run.finalizationError ?? 'the run failed',
    });
  }
}
