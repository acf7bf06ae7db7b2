import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { createHash } from 'node:crypto';
import { Repository } from 'typeorm';
import { AcceptanceService } from '../acceptance/acceptance.service';
import type { AuthenticatedKey } from '../auth/api-keys.service';
import { CaptureOptionsInput, resolveCaptureOptions } from '../capture/capture-options';
import { SsrfGuard } from '../egress/ssrf-guard';
import { Clock } from '../common/clock';
import { ApiError, ErrorCode } from '../common/api-error';
import { isId, newId } from '../common/ids';
import { ResultFilesService, ServedFile } from '../storage/result-files.service';
import { CreateScreenshotDto } from './dto/create-screenshot.dto';
import { ScreenshotJobDto } from './dto/screenshot-job.dto';
import { UPLOAD_MAX_BYTES, UPLOAD_MEDIA_TYPES, UploadScreenshotDto } from './dto/upload-screenshot.dto';
import { CaptureWork } from './capture-work';
import { ScreenshotJob } from './screenshot-job.entity';
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
  constructor(
    @InjectRepository(ScreenshotJob) private readonly jobs: Repository<ScreenshotJob>,
    private readonly acceptance: AcceptanceService,
    private readonly captureWork: CaptureWork,
    private readonly ssrfGuard: SsrfGuard,
    private readonly files: ResultFilesService,
    private readonly clock: Clock,
  ) {}

  /**
   * Checks the target against the SSRF guard, then accepts a `pending` job in one transaction with
   * its quota count (and idempotency record), and queues it after the commit ({@link AcceptanceService}).
   * Throws 400 `TARGET_NOT_ALLOWED`, 429 `PLAN_QUOTA_EXCEEDED`, 503 `SERVICE_UNAVAILABLE` (PostgreSQL
   * unreachable); a refused request leaves no job and counts nothing. Redis unreachable is no error:
   * the job is queued when it is back.
   */
  async create(caller: AuthenticatedKey, dto: CreateScreenshotDto): Promise<ScreenshotJobDto> {
    await this.ssrfGuard.assertAllowed(dto.url);
    const job = this.newJob(caller, dto, dto.url, 'url');
    return this.acceptance.accept({
      caller,
      write: async (manager) => {
        await manager.insert(ScreenshotJob, job);
        return { response: this.toDto(job), queue: [{ work: this.captureWork.work, id: job.id }] };
      },
    });
  }

  /**
   * Accepts an HTML upload (`POST /v1/screenshot/upload`): the document and a `pending` job are
   * stored in the acceptance transaction (counted like any accepted job), and the job is queued after it. The document is rendered as uploaded; its subresources
   * go through the SSRF guard at capture time.
   * Throws 400 `VALIDATION_FAILED` without a `file` part, 415 `UNSUPPORTED_MEDIA_TYPE` when the part
   * is not `text/html`, 413 `PAYLOAD_TOO_LARGE` above {@link UPLOAD_MAX_BYTES}, 429
   * `PLAN_QUOTA_EXCEEDED`; a failure leaves no job and counts nothing.
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
    const sha256 = uploadDigest(file.buffer);
    const job = this.newJob(caller, dto, `upload:${sha256}`, 'upload');
    return this.acceptance.accept({
      caller,
      write: async (manager) => {
        await manager.insert(ScreenshotJob, job);
        await manager.insert(ScreenshotUpload, { jobId: job.id, document: file.buffer, sha256 });
        return { response: this.toDto(job), queue: [{ work: this.captureWork.work, id: job.id }] };
      },
    });
  }

  private newJob(
    caller: AuthenticatedKey,
    input: CaptureOptionsInput,
    targetUrl: string,
    source: ScreenshotJob['source'],
  ): ScreenshotJob {
    const options = resolveCaptureOptions(input);
    return this.jobs.create({
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

  /** The caller's job. Throws 404 `NOT_FOUND` for a malformed id, an unknown one or another account's. */
  async get(caller: AuthenticatedKey, id: string): Promise<ScreenshotJobDto> {
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

  private async findOwn(caller: AuthenticatedKey, id: string): Promise<ScreenshotJob> {
    const job = isId('screenshot', id) ? await this.jobs.findOneBy({ id, accountId: caller.accountId }) : null;
    if (!job) throw ApiError.notFound('Screenshot job');
    return job;
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
    };
  }
}

/** Hex SHA-256 of an uploaded document: its identity in `targetUrl` and its idempotency fingerprint. */
export function uploadDigest(document: Buffer): string {
  return createHash('sha256').update(document).digest('hex');
}
