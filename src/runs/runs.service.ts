import { InjectQueue } from '@nestjs/bull';
import { notifyWorkEnded } from '../queue/work-ended';
import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Queue } from 'bull';
import { EntityManager, In, IsNull, LessThan, Repository } from 'typeorm';
import type { AuthenticatedKey } from '../auth/api-keys.service';
import { SsrfGuard } from '../egress/ssrf-guard';
import { ApiError, ErrorCode } from '../common/api-error';
import { Clock } from '../common/clock';
import { isId, newId } from '../common/ids';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { EventsService } from '../events/events.service';
import { RUN_JOB, RUN_QUEUE, RunPayload } from '../queue/queues';
import { AcceptanceService } from '../acceptance/acceptance.service';
import { DurableQueueService, ENQUEUE_TIMEOUT_MS } from '../queue/durable-queue.service';
import { ResultFilesService, ServedFile } from '../storage/result-files.service';
import { resolveSessionOptions } from '../capture/capture-options';
import { CreateRunDto } from './dto/create-run.dto';
import { ListRunsQueryDto, RunDto, RunListDto } from './dto/run.dto';
import { RUN_LIMITS, RunStep, stepLabel, withoutSecrets } from './run-steps';
import { Run } from './run.entity';
import { sealedRunPayload } from './sealed-run-values';
import { SecretCipher } from '../common/secret-cipher';

/** How a run ends: the fields written with its final status. */
export type RunEnding = Partial<Pick<Run, 'finalUrl' | 'pageTitle' | 'videoFile' | 'consoleErrorCount' | 'networkErrorCount' | 'consoleErrors' | 'networkErrors' | 'stepResults'>> &
  ({ status: 'completed' } | { status: 'failed'; finalizationError: string; failure: NonNullable<Run['failure']> });

/**
 * A run as the dashboard's Runs page shows it: the public shape ({@link RunDto}) plus the key it
 * counted against and its steps as submitted, each as its {@link stepLabel} (never a `fill` value or
 * a script) and whether it is `optional`, so a pending or running run shows what it will do.
 */
export type RunOverview = RunDto & { apiKeyId: string; plannedSteps: { label: string; optional: boolean }[] };

/** Default page size of `GET /v1/runs`. */
const DEFAULT_PAGE_SIZE = 20;

/**
 * Browser session runs (CONTRACT.md, "Browser session runs"): accepts them (SSRF check of `url`,
 * one screenshot of quota, `pending` row, queue job), answers polls and lists, cancels, and ends
 * them exactly once with their `run.completed` / `run.failed` event. The session itself runs in
 * {@link RunProcessor}.
 */
@Injectable()
export class RunsService implements OnModuleInit {
  private readonly logger = new Logger(RunsService.name);

  constructor(
    @InjectRepository(Run) private readonly runs: Repository<Run>,
    @InjectQueue(RUN_QUEUE) private readonly queue: Queue<RunPayload>,
    private readonly ssrfGuard: SsrfGuard,
    private readonly acceptance: AcceptanceService,
    private readonly durableQueues: DurableQueueService,
    private readonly files: ResultFilesService,
    private readonly events: EventsService,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly cipher: SecretCipher,
  ) {}

  /** Registers runs with the reconciler: pending runs without a live queue entry are queued again. */
  onModuleInit(): void {
    // Pending runs without a live queue entry are queued again by the reconciler, except runs with
    // sensitive `fill` steps: their values exist only in the queue entry, never in PostgreSQL.
    this.durableQueues.register<RunPayload>({
      kind: 'run',
      queue: this.queue,
      jobName: RUN_JOB,
      payload: (runId) => ({ runId }),
      jobOptions: { removeOnComplete: true, removeOnFail: true },
      pendingIds: async (manager, afterId, limit) => {
        const rows: { id: string }[] = await manager.query(
          `SELECT id FROM runs WHERE status = 'pending' AND ($1::varchar IS NULL OR id > $1)
             AND NOT (steps @> '[{"sensitive": true}]'::jsonb) ORDER BY id LIMIT $2`,
          [afterId, limit],
        );
        return rows.map((row) => row.id);
      },
    });
  }

  /**
   * Accepts a run: refuses `evaluate` steps when `RUNS_ALLOW_EVALUATE=false` (400
   * `VALIDATION_FAILED` naming `steps[i].action`), checks `url` with the SSRF guard (400
   * `TARGET_NOT_ALLOWED`; the steps' own URLs are checked on the wire when the run goes there), then
   * accepts a `pending` run without the sensitive values ({@link AcceptanceService}: the account's open
   * work (429 `TOO_MANY_PENDING_JOBS`), quota count (429 `PLAN_QUOTA_EXCEEDED`), row and idempotency
   * record in one statement) and queues it with them after it. A failure leaves
   * no run and counts nothing; a run Redis could not take stays `pending` for the reconciler.
   */
  async create(caller: AuthenticatedKey, dto: CreateRunDto): Promise<RunDto> {
    const steps = (dto.steps ?? []).map((step) => ({ ...step }) as RunStep);
    if (!this.config.runsAllowEvaluate) {
      const refused = steps.flatMap((step, i) => (step.action === 'evaluate' ? [{ field: `steps[${i}].action`, message: 'evaluate steps are disabled on this server' }] : []));
      if (refused.length) throw ApiError.validation(refused);
    }
    await this.ssrfGuard.assertAllowed(dto.url);
    const { stored, secrets } = withoutSecrets(steps);
    const run = this.runs.create({
      id: newId('run'),
      accountId: caller.accountId,
      apiKeyId: caller.apiKeyId,
      status: 'pending',
      url: dto.url,
      options: resolveSessionOptions(dto),
      video: dto.video ?? true,
      timeoutMs: dto.timeoutMs ?? RUN_LIMITS.timeoutMs.default,
      steps: stored,
      stepResults: [],
      finalUrl: null,
      pageTitle: null,
      videoFile: null,
      consoleErrorCount: 0,
      networkErrorCount: 0,
      consoleErrors: [],
      networkErrors: [],
      finalizationError: null,
      failure: null,
      attempts: 0,
      cancelRequestedAt: null,
      createdAt: this.clock.now(),
      startedAt: null,
      completedAt: null,
      resultsDeletedAt: null,
    });
    const answer = await this.acceptance.accept({ caller, insert: [{ entity: Run, rows: [run] }], response: this.toDto(run), queue: [] });
    // Bounded like every queueing after an acceptance (ENQUEUE_TIMEOUT_MS): the answer never waits for a Redis that is away.
    const queued = this.enqueue(run.id, secrets).then(
      () => true,
      (err) => this.logger.warn(`Could not queue ${run.id} (${(err as Error).message}); it stays pending for the reconciler`),
    );
    await Promise.race([queued, new Promise((resolve) => setTimeout(resolve, ENQUEUE_TIMEOUT_MS).unref())]);
    return answer;
  }

  /**
   * Puts a run on the queue (the queue job id is the run id, so a second enqueue is harmless). The
   * entry is removed when it ends, with the sensitive values it carries (sealed).
   */
  async enqueue(runId: string, sensitiveValues: Record<number, string> = {}): Promise<void> {
    const payload: RunPayload = sealedRunPayload(this.cipher, runId, sensitiveValues);
    await this.queue.add(RUN_JOB, payload, { jobId: runId, removeOnComplete: true, removeOnFail: true });
  }

  /** The caller's run. Throws 404 `NOT_FOUND` for a malformed id, an unknown one or another account's. */
  async get(caller: Pick<AuthenticatedKey, 'accountId'>, id: string): Promise<RunDto> {
    return this.toDto(await this.findOwn(caller, id));
  }

  /** The account's run with its key and step labels (dashboard). Throws 404 `NOT_FOUND` as {@link get}. */
  async getOverview(caller: Pick<AuthenticatedKey, 'accountId'>, id: string): Promise<RunOverview> {
    return this.toOverview(await this.findOwn(caller, id));
  }

  /**
   * The step screenshots of the caller's run, in step order, each read whole (for MCP); files past
   * `RESULT_TTL_DAYS` are left out. Throws 404 `NOT_FOUND` as {@link get}.
   */
  async stepScreenshots(caller: AuthenticatedKey, id: string): Promise<{ index: number; url: string; file: ServedFile }[]> {
    const run = await this.findOwn(caller, id);
    const shots: { index: number; url: string; file: ServedFile }[] = [];
    for (const step of run.stepResults) {
      if (!step.screenshotFile) continue;
      const file = await this.files.open(step.screenshotFile);
      if (file) shots.push({ index: step.index, url: this.files.publicUrl(step.screenshotFile), file });
    }
    return shots;
  }

  /**
   * The caller's runs, newest first, `limit` (1-100, default 20) per page, optionally of one status.
   * The cursor is opaque (the last run's creation time and id). Throws 400 `VALIDATION_FAILED`
   * naming `cursor` when it is not one this service issued.
   */
  async list(caller: Pick<AuthenticatedKey, 'accountId'>, query: ListRunsQueryDto): Promise<RunListDto> {
    const { rows, nextCursor } = await this.findPage(caller, query);
    return { data: rows.map((run) => this.toDto(run)), nextCursor };
  }

  /** A page of the account's runs as {@link list}, each with its key and step labels (dashboard). Throws as {@link list}. */
  async listOverviews(caller: Pick<AuthenticatedKey, 'accountId'>, query: ListRunsQueryDto): Promise<{ data: RunOverview[]; nextCursor: string | null }> {
    const { rows, nextCursor } = await this.findPage(caller, query);
    return { data: rows.map((run) => this.toOverview(run)), nextCursor };
  }

  private async findPage(caller: Pick<AuthenticatedKey, 'accountId'>, query: ListRunsQueryDto): Promise<{ rows: Run[]; nextCursor: string | null }> {
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const qb = this.runs
      .createQueryBuilder('run')
      .where('run.account_id = :accountId', { accountId: caller.accountId })
      .orderBy('run.created_at', 'DESC')
      .addOrderBy('run.id', 'DESC')
      .take(limit + 1);
    if (query.status) qb.andWhere('run.status = :status', { status: query.status });
    if (query.cursor !== undefined) {
      const cursor = decodeCursor(query.cursor);
      if (!cursor) throw ApiError.validation([{ field: 'cursor', message: 'must be a nextCursor returned by this endpoint' }]);
      qb.andWhere('(run.created_at, run.id) < (:createdAt, :id)', cursor);
    }
    const rows = await qb.getMany();
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return { rows: page, nextCursor: rows.length > limit && last ? encodeCursor(last) : null };
  }

  /**
   * Cancels the caller's run (`POST /v1/runs/:id/cancel`): a `pending` run ends `failed` with stage
   * `canceled` at once; a `running` one is asked to stop, and its worker ends it `failed` / `canceled`
   * once what was recorded is stored. Returns the run as it is now. Throws 404 `NOT_FOUND` as
   * {@link get}, 409 `RUN_ALREADY_ENDED` for a run that already ended.
   */
  async cancel(caller: Pick<AuthenticatedKey, 'accountId'>, id: string): Promise<RunDto> {
    const run = await this.findOwn(caller, id);
    if (run.status === 'pending') {
      const ended = await this.finish(run.id, { status: 'failed', finalizationError: 'the run was canceled', failure: { stage: 'canceled', stepIndex: null }, stepResults: skippedSteps(run.steps) }, ['pending']);
      if (ended) {
        await this.queue.removeJobs(run.id).catch(() => undefined);
        return this.toDto(ended);
      }
    }
    const requested = await this.runs.update({ id: run.id, status: 'running' }, { cancelRequestedAt: this.clock.now() });
    const now = await this.runs.findOneByOrFail({ id: run.id });
    if (!requested.affected && (now.status === 'completed' || now.status === 'failed')) {
      throw new ApiError(ErrorCode.RUN_ALREADY_ENDED, 409, `Run ${run.id} already ended (${now.status})`);
    }
    return this.toDto(now);
  }

  /**
   * Moves a `pending` run to `running` for a worker and returns it. Returns null when the run is
   * unknown or ended; a run found `running` was claimed before by a worker that died mid-run (its
   * queue job was redelivered), so it is ended `failed` at stage `worker` rather than run again
   * (its steps may have had effects, e.g. a purchase).
   */
  async claim(runId: string): Promise<Run | null> {
    const result = await this.runs
      .createQueryBuilder()
      .update(Run)
      .set({ status: 'running', startedAt: this.clock.now(), attempts: () => 'attempts + 1' })
      .where({ id: runId, status: 'pending' })
      .execute();
    if (result.affected) return this.runs.findOneByOrFail({ id: runId });
    await this.failStranded(runId);
    return null;
  }

  /** Ends a `running` run whose worker stopped (crash, lost queue job) as `failed` at stage `worker`. */
  async failStranded(runId: string): Promise<void> {
    const run = await this.runs.findOneBy({ id: runId, status: 'running' });
    if (!run) return;
    const done = new Set(run.stepResults.map((s) => s.index));
    const stepResults = [...run.stepResults, ...skippedSteps(run.steps).filter((s) => !done.has(s.index))];
    const stepIndex = stepResults.find((s) => s.status === 'skipped')?.index ?? null;
    await this.finish(runId, { status: 'failed', finalizationError: 'the worker stopped during the run', failure: { stage: 'worker', stepIndex }, stepResults }, ['running']);
  }

  /** Records the outcomes of the steps that ended so far (polling shows progress). */
  async progress(runId: string, stepResults: Run['stepResults']): Promise<void> {
    await this.runs.update({ id: runId, status: 'running' }, { stepResults });
  }

  /**
   * `pending` runs created before `before` (for the reconciler), and `running` runs started before
   * their own budget plus `slackMs` ago (their worker is gone).
   */
  async strandedRuns(before: Date, slackMs: number): Promise<{ pending: string[]; running: string[] }> {
    const pending = await this.runs.find({ select: { id: true }, where: { status: 'pending', createdAt: LessThan(before) }, take: 1000 });
    const running: { id: string }[] = await this.runs
      .createQueryBuilder('run')
      .select('run.id', 'id')
      .where(`run.status = 'running'`)
      .andWhere(`run.started_at < :now::timestamptz - make_interval(secs => (run.timeout_ms + :slackMs) / 1000.0)`, { now: this.clock.now(), slackMs })
      .limit(1000)
      .getRawMany();
    return { pending: pending.map((r) => r.id), running: running.map((r) => r.id) };
  }

  /**
   * Deletes the video and step screenshots of runs that ended before `before` (past
   * `RESULT_TTL_DAYS`), at most `limit` runs per call; returns how many files were deleted.
   */
  async purgeExpiredFiles(before: Date, limit: number): Promise<number> {
    const expired = await this.runs.find({
      select: { id: true, videoFile: true, stepResults: true },
      where: { status: In(['completed', 'failed']), resultsDeletedAt: IsNull(), completedAt: LessThan(before) },
      take: limit,
    });
    let deleted = 0;
    for (const run of expired) {
      const names = [run.videoFile, ...run.stepResults.map((s) => s.screenshotFile)].filter((n): n is string => Boolean(n));
      for (const name of names) await this.files.deleteFile(name);
      deleted += names.length;
      await this.runs.update({ id: run.id }, { resultsDeletedAt: this.clock.now() });
    }
    return deleted;
  }

  /** Whether the customer asked to cancel this running run. */
  async cancelRequested(runId: string): Promise<boolean> {
    const run = await this.runs.findOne({ select: { id: true, cancelRequestedAt: true }, where: { id: runId } });
    return Boolean(run?.cancelRequestedAt);
  }

  /**
   * Ends a run still in one of `from` (default: `pending` or `running`) with `ending`, and stores its
   * `run.completed` or `run.failed` event (spec section 6.1) in the same transaction, so a run that
   * reads ended always has its event; the webhook deliveries are enqueued after the commit. Returns the
   * ended run, or null when it had already ended (nothing is published then).
   */
  async finish(runId: string, ending: RunEnding, from: Run['status'][] = ['pending', 'running']): Promise<Run | null> {
    const ended = await this.runs.manager.transaction(async (manager) => {
      const result = await manager.update(Run, { id: runId, status: In(from) }, { ...ending, completedAt: this.clock.now() });
      if (!result.affected) return null;
      const run = await manager.findOneByOrFail(Run, { id: runId });
      const { afterCommit } = await this.publishEnd(manager, run);
      await notifyWorkEnded(manager, run.id);
      return { run, afterCommit };
    });
    if (!ended) return null;
    await ended.afterCommit().catch((err) => this.logger.error(`Could not enqueue the deliveries of ${runId}`, (err as Error).stack));
    return ended.run;
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

  private async findOwn(caller: Pick<AuthenticatedKey, 'accountId'>, id: string): Promise<Run> {
    const run = isId('run', id) ? await this.runs.findOneBy({ id, accountId: caller.accountId }) : null;
    if (!run) throw ApiError.notFound('Run');
    return run;
  }

  /** The public shape plus what only the dashboard shows ({@link RunOverview}). */
  private toOverview(run: Run): RunOverview {
    return { ...this.toDto(run), apiKeyId: run.apiKeyId, plannedSteps: run.steps.map((step) => ({ label: stepLabel(step), optional: Boolean(step.optional) })) };
  }

  /** Maps the entity to its public shape (file names become capability URLs). */
  toDto(run: Run): RunDto {
    return {
      id: run.id,
      status: run.status,
      url: run.url,
      finalUrl: run.finalUrl,
      pageTitle: run.pageTitle,
      videoUrl: run.videoFile ? this.files.publicUrl(run.videoFile) : null,
      consoleErrorCount: run.consoleErrorCount,
      networkErrorCount: run.networkErrorCount,
      consoleErrors: run.consoleErrors,
      networkErrors: run.networkErrors,
      steps: run.stepResults.map((step) => ({
        index: step.index,
        action: step.action,
        status: step.status,
        durationMs: step.durationMs,
        error: step.error,
        screenshotUrl: step.screenshotFile ? this.files.publicUrl(step.screenshotFile) : null,
        result: step.result ?? null,
      })),
      finalizationError: run.finalizationError,
      failure: run.failure,
      createdAt: run.createdAt.toISOString(),
      startedAt: run.startedAt?.toISOString() ?? null,
      completedAt: run.completedAt?.toISOString() ?? null,
    };
  }
}

/** Every step of a run that never started, as `skipped`. */
export function skippedSteps(steps: RunStep[]): Run['stepResults'] {
  return steps.map((step, index) => ({ index, action: step.action, status: 'skipped', durationMs: 0, error: null, screenshotFile: null, result: null }));
}

function encodeCursor(run: Run): string {
  return Buffer.from(`${run.createdAt.toISOString()}|${run.id}`).toString('base64url');
}

function decodeCursor(cursor: string): { createdAt: Date; id: string } | null {
  const [iso, id, extra] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  const createdAt = new Date(iso ?? '');
  if (extra !== undefined || !id || !isId('run', id) || Number.isNaN(createdAt.getTime())) return null;
  return { createdAt, id };
}
