import { InjectQueue } from '@nestjs/bull';
import { Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Queue } from 'bull';
import { createHash } from 'node:crypto';
import { Repository } from 'typeorm';
import type { AuthenticatedKey } from '../auth/api-keys.service';
import {
  captureCacheKey,
  CaptureOptions,
  captureOptionConflicts,
  CaptureOptionsInput,
  givenCaptureOptions,
  resolveCaptureOptions,
} from '../capture/capture-options';
import { SsrfGuard } from '../egress/ssrf-guard';
import { Clock } from '../common/clock';
import { ApiError, ErrorCode, FieldError } from '../common/api-error';
import { isId, newId } from '../common/ids';
import { CAPTURE_JOB, CAPTURE_QUEUE, CapturePayload } from '../queue/queues';
import { QuotaService } from '../quota/quota.service';
import { ResultFilesService, ServedFile } from '../storage/result-files.service';
import { CreateScreenshotDto } from './dto/create-screenshot.dto';
import { ScreenshotJobDto } from './dto/screenshot-job.dto';
import { UPLOAD_MAX_BYTES, UPLOAD_MEDIA_TYPES, UploadScreenshotDto } from './dto/upload-screenshot.dto';
import { CreateScreenshotBatchDto } from './dto/create-screenshot-batch.dto';
import { ScreenshotJobLifecycle } from './screenshot-job-lifecycle';
import { ScreenshotJob } from './screenshot-job.entity';
import { ScreenshotUpload } from './screenshot-upload.entity';
import { PendingJobsLimit } from './pending-jobs-limit';

/** The uploaded file as the multipart parser hands it over. */
export interface UploadedDocument {
  buffer: Buffer;
  /** Media type of the part, as sent. */
  mimetype: string;
  size: number;
}

/** Accepts screenshot jobs and answers polls; the capture itself runs in {@link CaptureProcessor}. */
@Injectable()
export class ScreenshotsService {
  private readonly logger = new Logger(ScreenshotsService.name);

  constructor(
    @InjectRepository(ScreenshotJob) private readonly jobs: Repository<ScreenshotJob>,
    @InjectQueue(CAPTURE_QUEUE) private readonly captureQueue: Queue<CapturePayload>,
    private readonly ssrfGuard: SsrfGuard,
    private readonly files: ResultFilesService,
    private readonly quota: QuotaService,
    private readonly pendingJobs: PendingJobsLimit,
    private readonly clock: Clock,
    private readonly lifecycle: ScreenshotJobLifecycle,
  ) {}

  /**
   * Checks the target against the SSRF guard, then, within one quota reservation of the caller's key,
   * inserts a `pending` job and enqueues its id. Throws 400 `TARGET_NOT_ALLOWED`, 429
   * `TOO_MANY_PENDING_JOBS` (nothing counted) and 429 `PLAN_QUOTA_EXCEEDED`. When the queue cannot take the job, the row is removed again and the
   * reservation released, so a failed request leaves no job behind and counts nothing, and the error
   * propagates (500).
   */
  async create(caller: AuthenticatedKey, dto: CreateScreenshotDto): Promise<ScreenshotJobDto> {
    assertNoConflicts(captureOptionConflicts(dto));
    await this.ssrfGuard.assertAllowed(dto.url);
    await this.pendingJobs.assertRoomFor(caller.accountId);
    const job = this.newJob(caller, dto, dto.url, 'url');
    const cached = await this.fromCache(job);
    if (cached) return cached;
    // The job row is written by the reservation's own statement: one round trip, both or neither.
    return this.quota.reserveWith(caller, this.insertJobStatement(job), async () => {
      await this.enqueue([job]);
      return this.toDto(job);
    });
  }

  /**
   * Accepts a batch (`POST /v1/screenshot/batch`, CONTRACT.md "Batches"): every item is checked first
   * (400 `VALIDATION_FAILED` naming `items[i].field`, 400 `TARGET_NOT_ALLOWED` naming `items[i].url`),
   * then the items that are not capture-cache hits are counted against the quota in one atomic step
   * (429 `PLAN_QUOTA_EXCEEDED` when they do not all fit), the jobs inserted in one transaction and
   * enqueued. All or nothing: a failure leaves no job and counts nothing. Returns the jobs in item order.
   */
  async createBatch(caller: AuthenticatedKey, dto: CreateScreenshotBatchDto): Promise<ScreenshotJobDto[]> {
    assertNoConflicts(dto.items.flatMap((item, i) => captureOptionConflicts(item, `items[${i}].`)));
    for (const [i, item] of dto.items.entries()) {
      await this.ssrfGuard.assertAllowed(item.url).catch((err: unknown) => {
        if (err instanceof ApiError && err.code === ErrorCode.TARGET_NOT_ALLOWED) {
          throw new ApiError(err.code, err.status, `items[${i}].url: ${err.message}`, { ...(err.details ?? {}), field: `items[${i}].url` });
        }
        throw err;
      });
    }
    await this.pendingJobs.assertRoomFor(caller.accountId, dto.items.length);
    const jobs = dto.items.map((item) => this.newJob(caller, item, item.url, 'url'));
    const hits = await Promise.all(jobs.map((job) => this.cacheSource(job)));
    const captures = jobs.filter((_, i) => !hits[i]);
    const insertAll = async () => {
      await this.jobs.manager.transaction((manager) => manager.insert(ScreenshotJob, jobs));
      await this.enqueue(captures);
    };
    if (captures.length) await this.quota.reserve(caller, insertAll, captures.length);
    else await insertAll();
    const answers = jobs.map((job) => this.toDto(job));
    await Promise.all(jobs.map((job, i) => (hits[i] ? this.completeFromCache(job, hits[i]) : undefined)));
    return answers;
  }

  /**
   * Accepts an HTML upload (`POST /v1/screenshot/upload`): within one quota reservation of the
   * caller's key (an upload counts like any accepted job), stores the document with a `pending` job
   * (one transaction) and enqueues the job. The document is rendered as uploaded; its subresources
   * go through the SSRF guard at capture time.
   * Throws 400 `VALIDATION_FAILED` without a `file` part, 415 `UNSUPPORTED_MEDIA_TYPE` when the part
   * is not `text/html`, 413 `PAYLOAD_TOO_LARGE` above {@link UPLOAD_MAX_BYTES}, 429
   * `TOO_MANY_PENDING_JOBS` and 429 `PLAN_QUOTA_EXCEEDED`; a failure leaves no job and counts nothing.
   */
  async createFromUpload(caller: AuthenticatedKey, file: UploadedDocument | undefined, dto: UploadScreenshotDto): Promise<ScreenshotJobDto> {
    if (!file) throw ApiError.validation([{ field: 'file', message: 'an HTML document is required in the multipart field "file"' }]);
    const mediaType = file.mimetype.split(';')[0].trim().toLowerCase();
    if (!UPLOAD_MEDIA_TYPES.includes(mediaType)) {
      throw new ApiError(ErrorCode.UNSUPPORTED_MEDIA_TYPE, 415, `The file must be text/html, not ${mediaType || 'untyped'}`);
    }
    if (file.size > UPLOAD_MAX_BYTES) {
      throw new ApiError(ErrorCode.PAYLOAD_TOO_LARGE, 413, `The file exceeds ${UPLOAD_MAX_BYTES} bytes`);
    }
    assertNoConflicts(captureOptionConflicts(dto));
    const sha256 = uploadDigest(file.buffer);
    await this.pendingJobs.assertRoomFor(caller.accountId);
    const job = this.newJob(caller, dto, `upload:${sha256}`, 'upload');
    const cached = await this.fromCache(job);
    if (cached) return cached;
    return this.quota.reserve(caller, async () => {
      await this.jobs.manager.transaction(async (manager) => {
        await manager.insert(ScreenshotJob, job);
        await manager.insert(ScreenshotUpload, { jobId: job.id, document: file.buffer, sha256 });
      });
      await this.enqueue([job]);
      return this.toDto(job);
    });
  }

  /**
   * The capture cache (CONTRACT.md, "Capture options": cache). When `job` asks for it and a `done` job
   * of the same account with the same cache key completed within `cacheTtl` seconds and its file still
   * exists, inserts `job` (`cached: true`, not counted against the quota), answers it `pending` as
   * usual and ends it `done` at once with a copy of that file (its own result URL), which publishes
   * `screenshot.completed`. Null when there is no such capture.
   */
  private async fromCache(job: ScreenshotJob): Promise<ScreenshotJobDto | null> {
    const source = await this.cacheSource(job);
    if (!source) return null;
    await this.jobs.insert(job);
    const answer = this.toDto(job);
    await this.completeFromCache(job, source);
    return answer;
  }

  /** The job whose capture `job` may reuse, or null (no `cache: true`, or no recent identical capture of the account). Marks `job` cached. */
  private async cacheSource(job: ScreenshotJob): Promise<ScreenshotJob | null> {
    const options = job.options as CaptureOptions;
    if (!options.cache || !job.cacheKey) return null;
    const source = await this.jobs
      .createQueryBuilder('job')
      .where('job.accountId = :accountId AND job.cacheKey = :cacheKey AND job.status = :done', { accountId: job.accountId, cacheKey: job.cacheKey, done: 'done' })
      .andWhere('job.completedAt >= :since', { since: new Date(this.clock.now().getTime() - options.cacheTtlS * 1000) })
      .andWhere('job.resultFile IS NOT NULL AND job.cached = false')
      .orderBy('job.completedAt', 'DESC')
      .getOne();
    if (!source) return null;
    job.cached = true;
    return source;
  }

  /** Ends a cached job `done` with a copy of `source`'s file; when the file is gone after all, the job is captured as usual instead. */
  private async completeFromCache(job: ScreenshotJob, source: ScreenshotJob): Promise<void> {
    const resultFile = await this.files.copy(source.resultFile as string);
    if (resultFile && (await this.lifecycle.complete(job.id, { resultFile, clipped: source.clipped }))) return;
    this.logger.warn(`The cached capture of ${job.id} (${source.id}) is gone; capturing instead`);
    await this.jobs.update({ id: job.id }, { cached: false });
    await this.enqueue([job]);
  }

  private newJob(
    caller: AuthenticatedKey,
    input: CaptureOptionsInput,
    targetUrl: string,
    source: ScreenshotJob['source'],
  ): ScreenshotJob {
    const options = resolveCaptureOptions(input);
    return this.jobs.create({
      requestedOptions: givenCaptureOptions(input),
      cacheKey: captureCacheKey(targetUrl, options),
      cached: false,
      id: newId('screenshot'),
      accountId: caller.accountId,
      apiKeyId: caller.apiKeyId,
      status: 'pending',
      targetUrl,
      source,
      width: options.width,
      height: options.height,
      fullPage: options.fullPage,
      format: options.format,
      delayMs: options.delayMs,
      options,
      clipped: false,
      createdAt: this.clock.now(),
      resultFile: null,
      error: null,
      startedAt: null,
      completedAt: null,
    });
  }

  /**
   * `INSERT … SELECT … FROM reservation` of a new job, for {@link QuotaService.reserveWith}: the row is
   * written only when the reservation succeeds, in the same statement. Columns come from the entity's
   * metadata (those the job sets; the others take their defaults).
   */
  private insertJobStatement(job: ScreenshotJob): { sql: string; params: unknown[] } {
    const columns = this.jobs.metadata.columns.filter((c) => c.getEntityValue(job) !== undefined);
    const params = columns.map((c) => c.getEntityValue(job));
    const placeholders = columns.map((c, i) => `$${i + 1}::${c.type === 'jsonb' ? 'jsonb' : this.jobs.manager.connection.driver.normalizeType(c)}`);
    return {
      sql: `INSERT INTO screenshot_jobs (${columns.map((c) => `"${c.databaseName}"`).join(', ')}) SELECT ${placeholders.join(', ')} FROM reservation`,
      params,
    };
  }

  /** Enqueues saved jobs; when the queue cannot take them, deletes the jobs (and their uploads) and rethrows. */
  private async enqueue(jobs: ScreenshotJob[]): Promise<void> {
    if (!jobs.length) return;
    try {
      await Promise.all(
        jobs.map((job) => this.captureQueue.add(CAPTURE_JOB, { jobId: job.id }, { jobId: job.id, removeOnComplete: true, removeOnFail: 1000 })),
      );
    } catch (err) {
      this.logger.error(`Could not enqueue ${jobs.map((j) => j.id).join(', ')}; removing the jobs`, (err as Error).stack);
      await this.jobs.delete(jobs.map((j) => j.id));
      throw err;
    }
  }

  /** The caller's job. Throws 404 `NOT_FOUND` for a malformed id, an unknown one or another account's. */
  async get(caller: Pick<AuthenticatedKey, 'accountId'>, id: string): Promise<ScreenshotJobDto> {
    return this.toDto(await this.findOwn(caller, id));
  }

  /**
   * The result image of the caller's job: null unless the job is `done` and its file still exists
   * (not past `RESULT_TTL_DAYS`). Throws 404 `NOT_FOUND` as {@link get}.
   */
  async openResult(caller: AuthenticatedKey, id: string): Promise<ServedFile | null> {
    const job = await this.findOwn(caller, id);
    return job.status === 'done' && job.resultFile ? this.files.open(job.resultFile) : null;
  }

  private async findOwn(caller: Pick<AuthenticatedKey, 'accountId'>, id: string): Promise<ScreenshotJob> {
    const job = isId('screenshot', id) ? await this.jobs.findOneBy({ id, accountId: caller.accountId }) : null;
    if (!job) throw ApiError.notFound('Screenshot job');
    return job;
  }

  /**
   * The account's newest jobs (the dashboard's Screenshots page), newest first, at most `limit`, each
   * with the target URL and the id of the key it counted against.
   */
  async listRecent(accountId: string, limit: number): Promise<(ScreenshotJobDto & { targetUrl: string; apiKeyId: string })[]> {
    const jobs = await this.jobs.find({ where: { accountId }, order: { createdAt: 'DESC', id: 'DESC' }, take: limit });
    return jobs.map((job) => ({ ...this.toDto(job), targetUrl: job.source === 'upload' ? 'HTML upload' : job.targetUrl, apiKeyId: job.apiKeyId }));
  }

  /** Maps the entity to its public shape. */
  toDto(job: ScreenshotJob): ScreenshotJobDto {
    return {
      id: job.id,
      status: job.status,
      url: job.status === 'done' && job.resultFile ? this.files.publicUrl(job.resultFile) : null,
      error: job.error,
      createdAt: job.createdAt.toISOString(),
      completedAt: job.completedAt?.toISOString() ?? null,
      format: job.format,
      width: job.width,
      height: job.height,
      fullPage: job.fullPage,
      clipped: job.clipped,
      cached: job.cached,
      options: job.requestedOptions ?? {},
    };
  }
}

/** Throws 400 `VALIDATION_FAILED` when the options combine in a way CONTRACT.md refuses. */
function assertNoConflicts(conflicts: FieldError[]): void {
  if (conflicts.length) throw ApiError.validation(conflicts);
}

/** Hex SHA-256 of an uploaded document: its identity in `targetUrl` and its idempotency fingerprint. */
export function uploadDigest(document: Buffer): string {
  return createHash('sha256').update(document).digest('hex');
}
