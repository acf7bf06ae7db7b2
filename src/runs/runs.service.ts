import { InjectQueue } from '@nestjs/bull';
import { requireAccountOwned } from '../accounts/find-account-owned';
import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Queue } from 'bull';
import { Repository } from 'typeorm';
import type { AuthenticatedKey } from '../auth/api-keys.service';
import { SsrfGuard } from '../egress/ssrf-guard';
import { ApiError, ErrorCode } from '../common/api-error';
import { newestFirstPage } from '../common/cursor';
import { Clock } from '../common/clock';
import { newId } from '../common/ids';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { RUN_QUEUE, RunPayload } from '../queue/queues';
import { AcceptanceService } from '../acceptance/acceptance.service';
import { DurableQueueService } from '../queue/durable-queue.service';
import { ResultFilesService, ServedFile } from '../storage/result-files.service';
import { captureOptionConflicts, resolveSessionOptions } from '../capture/capture-options';
import { CreateRunDto } from './dto/create-run.dto';
import { ListRunsQueryDto, RunDto, RunListDto } from './dto/run.dto';
import { RunLifecycle } from './run-lifecycle';
import { RUN_LIMITS, RunStep, stepLabel, withoutSecrets } from './run-steps';
import { RunWork } from './run-work';
import { Run } from './run.entity';
import { sealedRunPayload } from './sealed-run-values';
import { SecretCipher } from '../common/secret-cipher';
import { ProfilesService } from '../profiles/profiles.service';

/**
 * A run as the dashboard's Runs page shows it: the public shape ({@link RunDto}) plus the key it
 * counted against and its steps as submitted, each as its {@link stepLabel} (never a `fill` value or
 * a script) and whether it is `optional`, so a pending or running run shows what it will do.
 */
export type RunOverview = RunDto & { apiKeyId: string; plannedSteps: { label: string; optional: boolean }[] };

/**
 * The API side of browser session runs (CONTRACT.md, "Browser session runs"): accepts them (SSRF
 * check of `url`, one screenshot of quota, `pending` row, queue job), answers polls and lists, and
 * cancels; entities are mapped to {@link RunDto}s here. A run's states are written by the
 * {@link RunLifecycle}; the session itself runs in `RunProcessor`.
 */
@Injectable()
export class RunsService {
  constructor(
    @InjectRepository(Run) private readonly runs: Repository<Run>,
    @InjectQueue(RUN_QUEUE) private readonly queue: Queue<RunPayload>,
    private readonly ssrfGuard: SsrfGuard,
    private readonly acceptance: AcceptanceService,
    private readonly durableQueues: DurableQueueService,
    private readonly runWork: RunWork,
    private readonly lifecycle: RunLifecycle,
    private readonly files: ResultFilesService,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly cipher: SecretCipher,
    private readonly profiles: ProfilesService,
  ) {}

  /**
   * Accepts a run: refuses `evaluate` steps when `RUNS_ALLOW_EVALUATE=false` (400
   * `VALIDATION_FAILED` naming `steps[i].action`) and a viewport over `MAX_IMAGE_PIXELS` (400 naming
   * `width`, {@link captureOptionConflicts}), checks `url` with the SSRF guard (400
   * `TARGET_NOT_ALLOWED`; the steps' own URLs are checked on the wire when the run goes there), its
   * `profile` and `saveProfile` (404 `NOT_FOUND`, 400 `PROFILE_DOMAIN_NOT_ALLOWED`, 403
   * `PLAN_LIMIT_REACHED`: {@link ProfilesService.assertUsable}, {@link ProfilesService.assertSavable}), then
   * accepts a `pending` run without the sensitive values ({@link AcceptanceService}: the account's open
   * work (429 `TOO_MANY_PENDING_JOBS`), quota count (429 `PLAN_QUOTA_EXCEEDED`), row and idempotency
   * record in one statement) and queues it with them after it. A failure leaves
   * no run and counts nothing; a run Redis could not take stays `pending` for the reconciler.
   */
  async create(caller: AuthenticatedKey, dto: CreateRunDto): Promise<RunDto> {
    const steps = (dto.steps ?? []).map((step) => ({ ...step }) as RunStep);
    if (!this.config.runsAllowEvaluate) {
      const refused = steps.flatMap((step, i) =>
        step.action === 'evaluate' ? [{ field: `steps[${i}].action`, message: 'evaluate steps are disabled on this server' }] : [],
      );
      if (refused.length) throw ApiError.validation(refused);
    }
    const conflicts = captureOptionConflicts(dto, this.config);
    if (conflicts.length) throw ApiError.validation(conflicts);
    await this.ssrfGuard.assertAllowed(dto.url);
    await this.profiles.assertUsable(caller.accountId, [{ profile: dto.profile, url: dto.url, prefix: '' }]);
    if (dto.saveProfile) await this.profiles.assertSavable(caller.accountId, dto.saveProfile);
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
      saveProfile: dto.saveProfile ?? null,
      savedProfileId: null,
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
    // Queued with the sensitive values, sealed, which only the queue entry carries (bounded by ENQUEUE_TIMEOUT_MS, never throws).
    const payload: RunPayload = sealedRunPayload(this.cipher, run.id, secrets);
    await this.durableQueues.enqueue(this.runWork.work, run.id, payload);
    return answer;
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
   * The step screenshots of the caller's run, in step order (for MCP), read while they fit in
   * `budgetBytes` together: a file that does not fit in what is left is not read (its `data` is null),
   * so memory stays bounded by `budgetBytes` however many and large the images. Files past
   * `RESULT_TTL_DAYS` are left out. Throws 404 `NOT_FOUND` as {@link get}.
   */
  async stepScreenshots(
    caller: AuthenticatedKey,
    id: string,
    budgetBytes: number,
  ): Promise<{ index: number; url: string; file: ServedFile }[]> {
    const run = await this.findOwn(caller, id);
    const shots: { index: number; url: string; file: ServedFile }[] = [];
    let left = budgetBytes;
    for (const step of run.stepResults) {
      if (!step.screenshotFile) continue;
      const file = await this.files.open(step.screenshotFile, left);
      if (!file) continue;
      if (file.data) left -= file.data.length;
      shots.push({ index: step.index, url: this.files.publicUrl(step.screenshotFile), file });
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
  async listOverviews(
    caller: Pick<AuthenticatedKey, 'accountId'>,
    query: ListRunsQueryDto,
  ): Promise<{ data: RunOverview[]; nextCursor: string | null }> {
    const { rows, nextCursor } = await this.findPage(caller, query);
    return { data: rows.map((run) => this.toOverview(run)), nextCursor };
  }

  private async findPage(
    caller: Pick<AuthenticatedKey, 'accountId'>,
    query: ListRunsQueryDto,
  ): Promise<{ rows: Run[]; nextCursor: string | null }> {
    const qb = this.runs.createQueryBuilder('run').where('run.account_id = :accountId', { accountId: caller.accountId });
    if (query.status) qb.andWhere('run.status = :status', { status: query.status });
    return newestFirstPage(qb, query, 'run');
  }

  /**
   * Cancels the caller's run (`POST /v1/runs/:id/cancel`, {@link RunLifecycle.cancel}): a `pending`
   * run ends `failed` with stage `canceled` at once (and leaves the queue); a `running` one is asked to
   * stop, and its worker ends it `failed` / `canceled` once what was recorded is stored. Returns the
   * run as it is now. Throws 404 `NOT_FOUND` as {@link get}, 409 `RUN_ALREADY_ENDED` for a run that
   * already ended.
   */
  async cancel(caller: Pick<AuthenticatedKey, 'accountId'>, id: string): Promise<RunDto> {
    const { outcome, run } = await this.lifecycle.cancel(await this.findOwn(caller, id));
    if (outcome === 'already-ended') throw new ApiError(ErrorCode.RUN_ALREADY_ENDED, 409, `Run ${run.id} already ended (${run.status})`);
    if (outcome === 'ended') await this.queue.removeJobs(run.id).catch(() => undefined);
    return this.toDto(run);
  }

  private findOwn(caller: Pick<AuthenticatedKey, 'accountId'>, id: string): Promise<Run> {
    return requireAccountOwned(this.runs, 'run', id, caller.accountId, 'Run');
  }

  /** The public shape plus what only the dashboard shows ({@link RunOverview}). */
  private toOverview(run: Run): RunOverview {
    return {
      ...this.toDto(run),
      apiKeyId: run.apiKeyId,
      plannedSteps: run.steps.map((step) => ({ label: stepLabel(step), optional: Boolean(step.optional) })),
    };
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
      savedProfileId: run.savedProfileId ?? null,
      createdAt: run.createdAt.toISOString(),
      startedAt: run.startedAt?.toISOString() ?? null,
      completedAt: run.completedAt?.toISOString() ?? null,
    };
  }
}
