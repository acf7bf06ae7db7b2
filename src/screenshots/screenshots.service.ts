import { Inject, Injectable, Logger } from '@nestjs/common';
import { requireAccountOwned } from '../accounts/find-account-owned';
import { artifactJobFields, copyArtifacts } from '../results/artifacts';
import { EXTRACT_CAPS } from '../results/extracted';
import { CustomerMessage } from '../results/customer-messages';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, In, Repository } from 'typeorm';
import { AcceptanceService } from '../acceptance/acceptance.service';
import { CaptureBacklog } from '../acceptance/capture-backlog';
import type { AuthenticatedKey } from '../auth/api-keys.service';
import {
  captureCacheKey,
  CaptureOptions,
  captureOptionConflicts,
  CaptureOptionsInput,
  givenCaptureOptions,
  resolveCaptureOptions,
  freshCaptureSince,
} from '../capture/capture-options';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { SsrfGuard } from '../egress/ssrf-guard';
import { Clock } from '../common/clock';
import { ApiError, ErrorCode, FieldError } from '../common/api-error';
import { newId } from '../common/ids';
import { sha256Hex } from '../common/hashing';
import { DurableQueueService } from '../queue/durable-queue.service';
import { ResultFilesService, ServedFile } from '../storage/result-files.service';
import { ProfilesService } from '../profiles/profiles.service';
import { StorageDestinationsService } from '../storage-destinations/storage-destinations.service';
import { CreateScreenshotDto } from './dto/create-screenshot.dto';
import { ScreenshotJobDto } from './dto/screenshot-job.dto';
import { UPLOAD_MAX_BYTES, UPLOAD_MEDIA_TYPES, UploadScreenshotDto } from './dto/upload-screenshot.dto';
import { CreateScreenshotBatchDto, ScreenshotBatchDto } from './dto/create-screenshot-batch.dto';
import { CaptureWork } from './capture-work';
import { ScreenshotJobLifecycle } from './screenshot-job-lifecycle';
import { JOB_IMAGE_COLUMNS, QUEUE_CLASSES, QueueClass, ScreenshotJob } from './screenshot-job.entity';
import { publicColumns } from '../common/public-columns';
import { ScreenshotUpload } from './screenshot-upload.entity';

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
    private readonly acceptance: AcceptanceService,
    private readonly captureWork: CaptureWork,
    private readonly queues: DurableQueueService,
    private readonly ssrfGuard: SsrfGuard,
    private readonly files: ResultFilesService,
    private readonly clock: Clock,
    private readonly lifecycle: ScreenshotJobLifecycle,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly destinations: StorageDestinationsService,
    private readonly backlog: CaptureBacklog,
    private readonly profiles: ProfilesService,
  ) {}

  /**
   * Checks the target against the SSRF guard, then accepts a `pending` job ({@link AcceptanceService}:
   * the account's pending jobs, quota count, row and idempotency record in one statement; queued
   * after it). Throws 400 `VALIDATION_FAILED` for conflicting options or an image over `MAX_IMAGE_PIXELS`
   * ({@link captureOptionConflicts}) or a `storage.destinationId` that is not the account's, 400
   * `TARGET_NOT_ALLOWED` (the URL, or `upload.url`: {@link StorageDestinationsService.assertUsable}), 404 `NOT_FOUND`
   * and 400 `PROFILE_DOMAIN_NOT_ALLOWED` for a `profile` ({@link ProfilesService.assertUsable}), 429 `TOO_MANY_PENDING_JOBS` and 429
   * `PLAN_QUOTA_EXCEEDED` (nothing counted), 503 `SERVICE_UNAVAILABLE` (PostgreSQL unreachable). Redis
   * unreachable is no error: the job is queued when it is back. `jobId` (`scr_…`) is the new job's id
   * when the caller must know it before the job exists (a render link's single flight); default a new one.
   * `queueClass` is its order within the account's queued work ({@link QUEUE_CLASSES}; default `standard`).
   */
  async create(
    caller: AuthenticatedKey,
    dto: CreateScreenshotDto,
    { jobId, queueClass = 'standard' }: { jobId?: string; queueClass?: QueueClass } = {},
  ): Promise<ScreenshotJobDto> {
    assertNoConflicts(captureOptionConflicts(dto, this.config));
    await this.ssrfGuard.assertAllowed(dto.url);
    await this.destinations.assertUsable(caller.accountId, [{ input: dto, prefix: '' }]);
    const [profileVersion] = await this.profiles.assertUsable(caller.accountId, [{ profile: dto.profile, url: dto.url, prefix: '' }]);
    const job = this.newJob(caller, dto, dto.url, 'url', queueClass, profileVersion);
    if (jobId) job.id = jobId;
    const cached = await this.fromCache(caller, job);
    if (cached) return cached;
    return this.acceptance.accept({
      caller,
      insert: [{ entity: ScreenshotJob, rows: [job] }],
      response: this.toDto(job),
      queue: [{ work: this.captureWork.work, id: job.id }],
    });
  }

  /**
   * Accepts one capture job of `url` with the already validated options `input` inside `manager`'s
   * transaction ({@link AcceptanceService.acceptWithin}: counted against `caller`'s quota like any
   * job; never from the capture cache), for work that commits the job with rows of its own (a
   * monitor's check, CONTRACT.md "Monitors"; queue class `batch`). Returns the job and the work to run after the commit
   * (queueing). `crawlId` marks the job as a page of that crawl (CONTRACT.md, "Crawls"). Throws 429
   * `TOO_MANY_PENDING_JOBS` / `PLAN_QUOTA_EXCEEDED` with nothing written.
   */
  async acceptWithin(
    manager: EntityManager,
    caller: AuthenticatedKey,
    input: CaptureOptionsInput,
    url: string,
    crawlId: string | null = null,
  ): Promise<{ job: ScreenshotJobDto; afterCommit: () => Promise<void> }> {
    const job = this.newJob(caller, { ...input, cache: false }, url, 'url', 'batch');
    job.crawlId = crawlId;
    const { afterCommit } = await this.acceptance.acceptWithin(manager, {
      caller,
      insert: [{ entity: ScreenshotJob, rows: [job] }],
      response: null,
      queue: [{ work: this.captureWork.work, id: job.id }],
    });
    return { job: this.toDto(job), afterCommit };
  }

  /**
   * Accepts a batch (`POST /v1/screenshot/batch`, CONTRACT.md "Batches"): every item is checked first
   * (400 `VALIDATION_FAILED` naming `items[i].field`, 400 `TARGET_NOT_ALLOWED` naming `items[i].url`, 404 and 400
   * `PROFILE_DOMAIN_NOT_ALLOWED` for an item's `profile`),
   * then the jobs are accepted in one statement ({@link AcceptanceService}) that counts the items
   * that are not capture-cache hits (429 `PLAN_QUOTA_EXCEEDED` when they do not all fit), and queued
   * after it. All or nothing: a failure leaves no job and counts nothing. Returns `{ data }`, the jobs in
   * item order (the response, as stored for an `Idempotency-Key`). Its jobs are of queue class `batch`.
   */
  async createBatch(caller: AuthenticatedKey, dto: CreateScreenshotBatchDto): Promise<ScreenshotBatchDto> {
    assertNoConflicts(dto.items.flatMap((item, i) => captureOptionConflicts(item, this.config, `items[${i}].`)));
    for (const [i, item] of dto.items.entries()) {
      await this.ssrfGuard.assertAllowed(item.url).catch((err: unknown) => {
        if (err instanceof ApiError && err.code === ErrorCode.TARGET_NOT_ALLOWED) {
          throw new ApiError(err.code, err.status, `items[${i}].url: ${err.message}`, { ...(err.details ?? {}), field: `items[${i}].url` });
        }
        throw err;
      });
    }
    await this.destinations.assertUsable(
      caller.accountId,
      dto.items.map((input, i) => ({ input, prefix: `items[${i}].` })),
    );
    const profileVersions = await this.profiles.assertUsable(
      caller.accountId,
      dto.items.map((item, i) => ({ profile: item.profile, url: item.url, prefix: `items[${i}].` })),
    );
    const jobs = dto.items.map((item, i) => this.newJob(caller, item, item.url, 'url', 'batch', profileVersions[i]));
    const hits = await Promise.all(jobs.map((job) => this.cacheSource(job)));
    const captures = jobs.filter((_, i) => !hits[i]);
    const answers = await this.acceptance.accept({
      caller,
      count: captures.length,
      incoming: jobs.length,
      insert: [{ entity: ScreenshotJob, rows: jobs }],
      response: { data: jobs.map((job) => this.toDto(job)) },
      queue: captures.map((job) => ({ work: this.captureWork.work, id: job.id })),
    });
    await Promise.all(jobs.map((job, i) => (hits[i] ? this.completeFromCache(job, hits[i]) : undefined)));
    return answers;
  }

  /**
   * Accepts an HTML upload (`POST /v1/screenshot/upload`): the document and a `pending` job are stored
   * in the acceptance statement (counted like any accepted job), and the job is queued after it. The document is rendered as uploaded; its subresources
   * go through the SSRF guard at capture time.
   * Throws 400 `VALIDATION_FAILED` without a `file` part, 415 `UNSUPPORTED_MEDIA_TYPE` when the part
   * is not `text/html`, 413 `PAYLOAD_TOO_LARGE` above {@link UPLOAD_MAX_BYTES}, 429
   * `TOO_MANY_PENDING_JOBS` and 429 `PLAN_QUOTA_EXCEEDED`; a failure leaves no job and counts nothing.
   * `queueClass` as {@link create}'s.
   */
  async createFromUpload(
    caller: AuthenticatedKey,
    file: UploadedDocument | undefined,
    dto: UploadScreenshotDto,
    queueClass: QueueClass = 'standard',
  ): Promise<ScreenshotJobDto> {
    if (!file) throw ApiError.validation([{ field: 'file', message: 'an HTML document is required in the multipart field "file"' }]);
    const mediaType = file.mimetype.split(';')[0].trim().toLowerCase();
    if (!UPLOAD_MEDIA_TYPES.includes(mediaType)) {
      throw new ApiError(ErrorCode.UNSUPPORTED_MEDIA_TYPE, 415, `The file must be text/html, not ${mediaType || 'untyped'}`);
    }
    if (file.size > UPLOAD_MAX_BYTES) {
      throw new ApiError(ErrorCode.PAYLOAD_TOO_LARGE, 413, `The file exceeds ${UPLOAD_MAX_BYTES} bytes`);
    }
    assertNoConflicts(captureOptionConflicts(dto, this.config));
    await this.destinations.assertUsable(caller.accountId, [{ input: dto, prefix: '' }]);
    const sha256 = sha256Hex(file.buffer);
    const job = this.newJob(caller, dto, `upload:${sha256}`, 'upload', queueClass);
    const cached = await this.fromCache(caller, job);
    if (cached) return cached;
    return this.acceptance.accept({
      caller,
      insert: [
        { entity: ScreenshotJob, rows: [job] },
        { entity: ScreenshotUpload, rows: [{ jobId: job.id, document: file.buffer, sha256 }] },
      ],
      response: this.toDto(job),
      queue: [{ work: this.captureWork.work, id: job.id }],
    });
  }

  /**
   * The capture cache (CONTRACT.md, "Capture options": cache). When `job` asks for it and a `done` job
   * of the same account with the same cache key completed within `cacheTtl` seconds and its file still
   * exists, accepts `job` (`cached: true`, not counted against the quota), answers it `pending` as
   * usual and ends it `done` at once with a copy of that file (its own result URL), which publishes
   * `screenshot.completed`. Null when there is no such capture.
   */
  private async fromCache(caller: AuthenticatedKey, job: ScreenshotJob): Promise<ScreenshotJobDto | null> {
    const source = await this.cacheSource(job);
    if (!source) return null;
    const answer = await this.acceptance.accept({
      caller,
      count: 0,
      insert: [{ entity: ScreenshotJob, rows: [job] }],
      response: this.toDto(job),
      queue: [],
    });
    await this.completeFromCache(job, source);
    return answer;
  }

  /**
   * The newest capture of the account with this cache key (`captureCacheKey`) that is fresh for `ttlS`
   * seconds by the one rule of a fresh cached capture ({@link freshCaptureSince}: completed at most
   * `ttlS` s ago, a real capture rather than a cache copy) and still names a result file, or null
   * (CONTRACT.md, "Capture options": cache; "Render links"). Both the API's cache and render links look
   * up through it; it reads and writes nothing else.
   */
  async freshCapture(
    accountId: string,
    cacheKey: string,
    ttlS: number,
  ): Promise<(ScreenshotJob & { artifacts: { image: string }; completedAt: Date }) | null> {
    const source = await this.jobs
      .createQueryBuilder('job')
      .where('job.accountId = :accountId AND job.cacheKey = :cacheKey AND job.status = :done', { accountId, cacheKey, done: 'done' })
      .andWhere('job.completedAt >= :since', { since: freshCaptureSince(this.clock.now().getTime(), ttlS) })
      .andWhere(`job.artifacts ? 'image' AND job.cached = false`)
      .orderBy('job.completedAt', 'DESC')
      .getOne();
    return source as (ScreenshotJob & { artifacts: { image: string }; completedAt: Date }) | null;
  }

  /** The job whose capture `job` may reuse, or null (no `cache: true`, or no fresh identical capture of the account: {@link freshCapture}). Marks `job` cached. */
  private async cacheSource(job: ScreenshotJob): Promise<ScreenshotJob | null> {
    const options = job.options as CaptureOptions;
    if (!options.cache || !job.cacheKey) return null;
    const source = await this.freshCapture(job.accountId, job.cacheKey, options.cacheTtlS);
    if (!source) return null;
    job.cached = true;
    return source;
  }

  /** Ends a cached job `done` with a copy of `source`'s file; when the file is gone after all, the job is captured as usual instead. */
  private async completeFromCache(job: ScreenshotJob, source: ScreenshotJob): Promise<void> {
    const artifacts = await copyArtifacts(source.artifacts, (file) => this.files.copy(file));
    if (artifacts && (await this.lifecycle.complete(job.id, { artifacts, clipped: source.clipped, targetStatus: source.targetStatus })))
      return;
    this.logger.warn(`The cached capture of ${job.id} (${source.id}) is gone; capturing instead`);
    await this.jobs.update({ id: job.id }, { cached: false });
    await this.queues.enqueue(this.captureWork.work, job.id);
  }

  private newJob(
    caller: AuthenticatedKey,
    input: CaptureOptionsInput,
    targetUrl: string,
    source: ScreenshotJob['source'],
    queueClass: QueueClass,
    profileVersion: number | null = null,
  ): ScreenshotJob {
    const options = resolveCaptureOptions(input);
    return this.jobs.create({
      queueClass: QUEUE_CLASSES[queueClass],
      claimedBy: null,
      requestedOptions: givenCaptureOptions(input),
      cacheKey: captureCacheKey(targetUrl, options, profileVersion),
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
      crawlId: null,
      clipped: false,
      targetStatus: null,
      createdAt: this.clock.now(),
      artifacts: {},
      error: null,
      startedAt: null,
      completedAt: null,
    });
  }

  /**
   * Seconds after which the job `jobId` may have ended, 1–3,600 (a `Retry-After`; from the backlog
   * ahead of it and the measured throughput: `CaptureBacklog.retryAfterForJob`). Never throws.
   */
  retryAfterS(jobId: string): Promise<number> {
    return this.backlog.retryAfterForJob(jobId);
  }

  /** The caller's job. Throws 404 `NOT_FOUND` for a malformed id, an unknown one or another account's. */
  async get(caller: Pick<AuthenticatedKey, 'accountId'>, id: string): Promise<ScreenshotJobDto> {
    return this.toDto(await this.findOwn(caller, id));
  }

  /**
   * The result image of the caller's job: null unless the job is `done` and its file still exists
   * (not past `RESULT_TTL_DAYS`); read only when it has at most `maxBytes` bytes (else its `data` is
   * null). Throws 404 `NOT_FOUND` as {@link get}.
   */
  async openResult(caller: AuthenticatedKey, id: string, maxBytes: number): Promise<ServedFile | null> {
    const job = await this.findOwn(caller, id);
    return job.status === 'done' && job.artifacts.image ? this.files.open(job.artifacts.image, maxBytes) : null;
  }

  /**
   * The text of one extracted file of the caller's done job (`markdown`, `html`, `text`, or `links` as
   * JSON), or null when the job did not extract it or the file expired. Throws 404 `NOT_FOUND` as {@link get}.
   */
  async openExtracted(
    caller: Pick<AuthenticatedKey, 'accountId'>,
    id: string,
    kind: 'markdown' | 'html' | 'text' | 'links',
  ): Promise<string | null> {
    const job = await this.findOwn(caller, id);
    const file = job.status === 'done' ? job.artifacts.extracted?.[kind]?.file : undefined;
    if (!file) return null;
    // Extracted files are at most their caps (html's, 10 MiB, is the largest).
    return (await this.files.open(file, EXTRACT_CAPS.html))?.data?.toString('utf8') ?? null;
  }

  private findOwn(caller: Pick<AuthenticatedKey, 'accountId'>, id: string): Promise<ScreenshotJob> {
    return requireAccountOwned(this.jobs, 'screenshot', id, caller.accountId, 'Screenshot job');
  }

  /**
   * The account's newest jobs (the dashboard's Screenshots page), newest first, at most `limit`, each
   * with the target URL and the id of the key it counted against.
   */
  async listRecent(accountId: string, limit: number): Promise<(ScreenshotJobDto & { targetUrl: string; apiKeyId: string })[]> {
    const jobs = await this.jobs.find({ where: { accountId }, order: { createdAt: 'DESC', id: 'DESC' }, take: limit });
    return jobs.map((job) => ({
      ...this.toDto(job),
      targetUrl: job.source === 'upload' ? 'HTML upload' : job.targetUrl,
      apiKeyId: job.apiKeyId,
    }));
  }

  /** Maps the entity to its public shape. */
  toDto(job: ScreenshotJob): ScreenshotJobDto {
    return {
      id: job.id,
      status: job.status,
      ...artifactJobFields(job.artifacts, job.status === 'done', (file) => this.files.publicUrl(file)),
      error: job.error,
      createdAt: job.createdAt.toISOString(),
      completedAt: job.completedAt?.toISOString() ?? null,
      ...publicColumns(job, JOB_IMAGE_COLUMNS),
      cached: job.cached,
      crawlId: job.crawlId,
      options: job.requestedOptions ?? {},
    };
  }

  /**
   * What a crawl reads of its pages' jobs (CONTRACT.md, "Crawls"), by job id, for the ids in `jobIds`
   * that exist: status, the result file and the extracted files by kind (names in storage), the
   * page's title (`metadata` extraction) and its extracted links' file.
   */
  async crawlPageResults(jobIds: string[]): Promise<Map<string, CrawlPageResult>> {
    const jobs = jobIds.length ? await this.jobs.findBy({ id: In(jobIds) }) : [];
    return new Map(
      jobs.map((job) => {
        const extracted = job.status === 'done' ? (job.artifacts.extracted ?? null) : null;
        const files: Record<string, string> = {};
        for (const kind of ['markdown', 'html', 'text', 'links'] as const) {
          const file = extracted?.[kind]?.file;
          if (file) files[kind] = file;
        }
        const result: CrawlPageResult = {
          status: job.status,
          resultFile: job.status === 'done' ? (job.artifacts.image ?? null) : null,
          extractedFiles: files,
          title: extracted?.metadata?.title ?? null,
          linksFile: extracted?.links?.file ?? null,
        };
        return [job.id, result];
      }),
    );
  }

  /**
   * Ends `failed` every job of the crawl `crawlId` not yet started (`pending`), with `message` as
   * their customer-safe error and their `screenshot.failed` events; their quota is not given back
   * (CONTRACT.md, "Crawls": cancel). Returns how many ended.
   */
  async failPendingOfCrawl(crawlId: string, message: string): Promise<number> {
    const pending = await this.jobs.find({ select: { id: true }, where: { crawlId, status: 'pending' } });
    let ended = 0;
    for (const { id } of pending) if (await this.lifecycle.fail(id, new CustomerMessage(message))) ended++;
    return ended;
  }
}

/** A crawl page's job as {@link ScreenshotsService.crawlPageResults} reads it (file names, not URLs). */
export interface CrawlPageResult {
  status: ScreenshotJob['status'];
  /** The image or PDF, once done (null with `format: "none"`). */
  resultFile: string | null;
  /** Extracted files by kind (`markdown`, `html`, `text`, `links`), once done. */
  extractedFiles: Record<string, string>;
  title: string | null;
  linksFile: string | null;
}

/** Throws 400 `VALIDATION_FAILED` when the options combine in a way CONTRACT.md refuses. */
function assertNoConflicts(conflicts: FieldError[]): void {
  if (conflicts.length) throw ApiError.validation(conflicts);
}
