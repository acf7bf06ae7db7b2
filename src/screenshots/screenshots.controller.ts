import { Body, Controller, Get, HttpCode, Param, Post, Req, Res, UploadedFile, UseInterceptors } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { QueueClass } from './screenshot-job.entity';
import { FileInterceptor } from '@nestjs/platform-express';
import { ApiAcceptedResponse, ApiBody, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { ApiKeyAuth, CurrentApiKey } from '../auth/current-api-key.decorator';
import type { AuthenticatedKey } from '../auth/api-keys.service';
import { ApiErrorResponses } from '../common/api-error-responses.decorator';
import { PROFILE_USE_400 } from '../profiles/profile-errors';
import { MultipartBody } from '../common/body-parsing-routes';
import { AUTHENTICATED_RESPONSE_HEADERS, IDEMPOTENCY_REPLAYED_RESPONSE_HEADER } from '../common/operational-headers';
import { Idempotent } from '../idempotency/idempotent.decorator';
import { PreferWait, preferredWaitSeconds } from '../idempotency/prefer-wait';
import { ApiPreferWait } from '../idempotency/prefer-wait.openapi';
import { BATCH_ITEMS, CreateScreenshotBatchDto, ScreenshotBatchDto } from './dto/create-screenshot-batch.dto';
import { CreateScreenshotDto } from './dto/create-screenshot.dto';
import { ScreenshotJobDto } from './dto/screenshot-job.dto';
import { artifactExamples, artifactJobFields } from '../results/artifacts';
import {
  UPLOAD_FIELD_MAX_BYTES,
  UPLOAD_FORM_FIELDS_MAX,
  UPLOAD_MAX_BYTES,
  UploadScreenshotDto,
  UploadScreenshotFormDto,
} from './dto/upload-screenshot.dto';
import { ScreenshotsService, UploadedDocument } from './screenshots.service';

const CREATE_EXAMPLES = {
  minimal: { summary: 'Only the URL (1280×800 PNG)', value: { url: 'https://example.com' } },
  fullPage: {
    summary: 'Full-page JPEG of a mobile viewport after 500 ms',
    value: { url: 'https://example.com', width: 390, height: 844, fullPage: true, format: 'jpeg', quality: 70, delay: 500 },
  },
  element: {
    summary: 'One element at 2× once it is visible, cookie banner hidden',
    value: { url: 'https://example.com', selector: '#pricing', scale: 2, waitForSelector: '#pricing', hideSelectors: ['#cookie-banner'] },
  },
  phone: {
    summary: 'An iPhone 15 in dark mode, German, Berlin time, cached for an hour',
    value: {
      url: 'https://example.com',
      device: 'iPhone 15',
      darkMode: true,
      locale: 'de-DE',
      timezone: 'Europe/Berlin',
      cache: true,
      cacheTtl: 3600,
    },
  },
  signedIn: {
    summary: 'A signed-in page: a cookie and a header for its origin only',
    value: {
      url: 'https://app.example.com/dashboard',
      cookies: [{ name: 'session', value: 'abc123', secure: true, httpOnly: true }],
      headers: { 'X-Preview-Token': 't0k3n' },
      waitUntil: 'networkidle',
    },
  },
  pdf: {
    summary: 'A landscape Letter PDF',
    value: { url: 'https://example.com/invoice/42', format: 'pdf', pdf: { paper: 'Letter', landscape: true } },
  },
};
const PENDING_JOB_EXAMPLE: ScreenshotJobDto = {
  id: 'scr_8cV1nQw3ZrT5yU7iO9pA2sD4',
  status: 'pending',
  // A pending job shows no artifact yet (each field null).
  ...artifactJobFields({}, false, (file) => file),
  error: null,
  createdAt: '2026-11-20T12:00:00.000Z',
  completedAt: null,
  format: 'png',
  width: 1280,
  height: 800,
  fullPage: false,
  clipped: false,
  targetStatus: null,
  cached: false,
  crawlId: null,
  options: {},
};
const DONE_JOB_EXAMPLE: ScreenshotJobDto = {
  ...PENDING_JOB_EXAMPLE,
  status: 'done',
  ...artifactExamples().job,
  completedAt: '2026-11-20T12:00:02.418Z',
};

/** The 202 of both job-creating routes: the accepted job, counted against the quota, replayable. */
const ApiAcceptedJobResponse = () =>
  ApiAcceptedResponse({
    type: ScreenshotJobDto,
    description: 'Job accepted and counted against the monthly quota (a replay is not counted again)',
    headers: { ...AUTHENTICATED_RESPONSE_HEADERS, ...IDEMPOTENCY_REPLAYED_RESPONSE_HEADER },
    example: PENDING_JOB_EXAMPLE,
  });

@ApiTags('screenshots')
@ApiKeyAuth()
@Controller('v1/screenshot')
export class ScreenshotsController {
  constructor(
    private readonly screenshots: ScreenshotsService,
    private readonly preferWait: PreferWait,
  ) {}

  /** The answer for an accepted job: with `Prefer: wait=N`, the ended job when it ends in time (CONTRACT.md, "Synchronous answers"). */
  private answer(caller: AuthenticatedKey, req: Request, res: Response, job: ScreenshotJobDto): Promise<ScreenshotJobDto> {
    return this.preferWait.answer(
      req,
      res,
      job,
      (id) => this.screenshots.get(caller, id),
      (j) => j.status === 'done' || j.status === 'failed',
    );
  }

  @Post()
  @HttpCode(202)
  @Idempotent()
  @ApiOperation({
    operationId: 'createScreenshot',
    summary: 'Enqueue a screenshot job',
    description:
      'Validates the capture options, counts one screenshot against the monthly quota of the API key, enqueues a job and answers at once ' +
      'with its id and status `pending`. Poll `GET /v1/screenshot/{id}` until `done` or `failed`. ' +
      'When the quota is used up the answer is 429 `PLAN_QUOTA_EXCEEDED` with `Retry-After`. Send an `Idempotency-Key` to retry safely.',
  })
  @ApiBody({ type: CreateScreenshotDto, examples: CREATE_EXAMPLES })
  @ApiAcceptedJobResponse()
  @ApiPreferWait(ScreenshotJobDto, DONE_JOB_EXAMPLE)
  @ApiErrorResponses(PROFILE_USE_400, 401, 404, 413, 415, 429, 500)
  async create(
    @CurrentApiKey() caller: AuthenticatedKey,
    @Body() dto: CreateScreenshotDto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<ScreenshotJobDto> {
    return this.answer(caller, req, res, await this.screenshots.create(caller, dto, { queueClass: queueClassOf(req) }));
  }

  @Post('upload')
  @HttpCode(202)
  @Idempotent()
  @UseInterceptors(
    FileInterceptor('file', {
      limits: {
        fileSize: UPLOAD_MAX_BYTES,
        files: 1,
        fields: UPLOAD_FORM_FIELDS_MAX,
        fieldSize: UPLOAD_FIELD_MAX_BYTES,
        parts: UPLOAD_FORM_FIELDS_MAX + 1,
      },
    }),
  )
  @ApiOperation({
    operationId: 'uploadScreenshot',
    summary: 'Enqueue a screenshot of an uploaded HTML document',
    description:
      'multipart/form-data with the document in `file` (`text/html`, at most 10 MiB) and the capture options of `POST /v1/screenshot` (except `url`) as form fields. ' +
      'The document is rendered as uploaded; what it loads goes through the SSRF guard. Counts one screenshot against the monthly quota and answers like `POST /v1/screenshot`. ' +
      'Send an `Idempotency-Key` to retry safely (fingerprint: the form fields and the SHA-256 of the file).',
  })
  @MultipartBody()
  @ApiBody({
    type: UploadScreenshotFormDto,
    examples: {
      html: { summary: 'An HTML document at 800×600', value: { file: '<!doctype html><h1>Invoice 42</h1>', width: 800, height: 600 } },
    },
  })
  @ApiAcceptedJobResponse()
  @ApiPreferWait(ScreenshotJobDto, DONE_JOB_EXAMPLE)
  @ApiErrorResponses(400, 401, 413, 415, 429, 500)
  async upload(
    @CurrentApiKey() caller: AuthenticatedKey,
    @UploadedFile() file: UploadedDocument | undefined,
    @Body() dto: UploadScreenshotDto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<ScreenshotJobDto> {
    return this.answer(caller, req, res, await this.screenshots.createFromUpload(caller, file, dto, queueClassOf(req)));
  }

  @Post('batch')
  @HttpCode(202)
  @Idempotent()
  @ApiOperation({
    operationId: 'createScreenshotBatch',
    summary: 'Enqueue a batch of screenshot jobs',
    description:
      `Accepts ${BATCH_ITEMS.min}–${BATCH_ITEMS.max} capture requests (each a body of \`POST /v1/screenshot\`) and answers with one \`pending\` job per item, in the order of \`items\`. ` +
      'All or nothing: an invalid item is 400 `VALIDATION_FAILED` naming the field as `items[i].field`, and when the quota cannot take every item ' +
      '(a capture-cache hit does not count) the answer is 429 `PLAN_QUOTA_EXCEEDED`; either way no job is created and nothing is counted. ' +
      'Each job is then an ordinary job: poll `GET /v1/screenshot/{id}`, with its own events. Send an `Idempotency-Key` to retry safely.',
  })
  @ApiBody({
    type: CreateScreenshotBatchDto,
    examples: {
      three: {
        summary: 'Three pages, one as a full-page WebP',
        value: {
          items: [
            { url: 'https://example.com' },
            { url: 'https://example.org', fullPage: true, format: 'webp' },
            { url: 'https://example.net' },
          ],
        },
      },
    },
  })
  @ApiAcceptedResponse({
    type: ScreenshotBatchDto,
    description: 'Jobs accepted, one per item, counted against the monthly quota (a replay is not counted again)',
    headers: { ...AUTHENTICATED_RESPONSE_HEADERS, ...IDEMPOTENCY_REPLAYED_RESPONSE_HEADER },
    example: { data: [PENDING_JOB_EXAMPLE, { ...PENDING_JOB_EXAMPLE, id: 'scr_8cV1nQw3ZrT5yU7iO9pA2sD5' }] },
  })
  @ApiErrorResponses(PROFILE_USE_400, 401, 404, 413, 415, 429, 500)
  createBatch(@CurrentApiKey() caller: AuthenticatedKey, @Body() dto: CreateScreenshotBatchDto): Promise<ScreenshotBatchDto> {
    return this.screenshots.createBatch(caller, dto);
  }

  @Get(':id')
  @ApiOperation({
    operationId: 'getScreenshot',
    summary: 'Get a screenshot job',
    description: 'Returns the job for polling. `url` is the result URL once `status` is `done`.',
  })
  @ApiParam({ name: 'id', description: 'Job id from `createScreenshot`', example: 'scr_8cV1nQw3ZrT5yU7iO9pA2sD4' })
  @ApiOkResponse({ type: ScreenshotJobDto, description: 'The job', headers: AUTHENTICATED_RESPONSE_HEADERS, example: DONE_JOB_EXAMPLE })
  @ApiErrorResponses({ status: 400, codes: ['INVALID_ORGANIZATION_ID'] }, 401, 404, 500)
  get(@CurrentApiKey() caller: AuthenticatedKey, @Param('id') id: string): Promise<ScreenshotJobDto> {
    return this.screenshots.get(caller, id);
  }
}

/**
 * The queue class of a job accepted by `req` (docs/durability.md, "Fair share"): `interactive` when the
 * request waits for it (`Prefer: wait=N`, CONTRACT.md "Synchronous answers"), else `standard`.
 */
function queueClassOf(req: Request): QueueClass {
  return preferredWaitSeconds(req.headers.prefer) === null ? 'standard' : 'interactive';
}
