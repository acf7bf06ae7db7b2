import { InjectQueue } from '@nestjs/bull';
import { Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Queue } from 'bull';
import { Repository } from 'typeorm';
import type { AuthenticatedKey } from '../auth/api-keys.service';
import { SsrfGuard } from '../capture/ssrf-guard';
import { ApiError } from '../common/api-error';
import { isId, newId } from '../common/ids';
import { CAPTURE_JOB, CAPTURE_QUEUE, CapturePayload } from '../queue/queues';
import { QuotaService } from '../quota/quota.service';
import { ResultFilesService } from '../storage/result-files.service';
import { CreateScreenshotDto, SCREENSHOT_LIMITS } from './dto/create-screenshot.dto';
import { ScreenshotJobDto } from './dto/screenshot-job.dto';
import { ScreenshotJob } from './screenshot-job.entity';

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
  ) {}

  /**
   * Checks the target against the SSRF guard, then, within one quota reservation of the caller's key,
   * inserts a `pending` job and enqueues its id. Throws 400 `TARGET_NOT_ALLOWED` and 429
   * `PLAN_QUOTA_EXCEEDED`. When the queue cannot take the job, the row is removed again and the
   * reservation released, so a failed request leaves no job behind and counts nothing, and the error
   * propagates (500).
   */
  async create(caller: AuthenticatedKey, dto: CreateScreenshotDto): Promise<ScreenshotJobDto> {
    await this.ssrfGuard.assertAllowed(dto.url);
    return this.quota.reserve(caller, async () => {
      const job = await this.jobs.save(
        this.jobs.create({
          id: newId('screenshot'),
          accountId: caller.accountId,
          apiKeyId: caller.apiKeyId,
          status: 'pending',
          targetUrl: dto.url,
          width: dto.width ?? SCREENSHOT_LIMITS.width.default,
          height: dto.height ?? SCREENSHOT_LIMITS.height.default,
          fullPage: dto.fullPage ?? false,
          format: dto.format ?? 'png',
          delayMs: dto.delay ?? SCREENSHOT_LIMITS.delayMs.default,
          resultFile: null,
          error: null,
          startedAt: null,
          completedAt: null,
        }),
      );
      try {
        await this.captureQueue.add(CAPTURE_JOB, { jobId: job.id }, { jobId: job.id, removeOnComplete: true, removeOnFail: 1000 });
      } catch (err) {
        this.logger.error(`Could not enqueue ${job.id}; removing the job`, (err as Error).stack);
        await this.jobs.delete({ id: job.id });
        throw err;
      }
      return this.toDto(job);
    });
  }

  /** The caller's job. Throws 404 `NOT_FOUND` for a malformed id, an unknown one or another account's. */
  async get(caller: AuthenticatedKey, id: string): Promise<ScreenshotJobDto> {
    const job = isId('screenshot', id) ? await this.jobs.findOneBy({ id, accountId: caller.accountId }) : null;
    if (!job) throw ApiError.notFound('Screenshot job');
    return this.toDto(job);
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
    };
  }
}
