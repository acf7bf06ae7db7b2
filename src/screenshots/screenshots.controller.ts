import { Body, Controller, Get, HttpCode, Param, Post, UploadedFile, UseInterceptors } from '@nestjs/common';
import { FileInterceptor } from '@nestjs/platform-express';
import { ApiAcceptedResponse, ApiBody, ApiConsumes, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { ApiKeyAuth, CurrentApiKey } from '../auth/current-api-key.decorator';
import type { AuthenticatedKey } from '../auth/api-keys.service';
import { ApiErrorResponses } from '../common/api-error-responses.decorator';
import { AUTHENTICATED_RESPONSE_HEADERS, IDEMPOTENCY_REPLAYED_RESPONSE_HEADER } from '../common/operational-headers';
import { Idempotent } from '../idempotency/idempotent.decorator';
import { CreateScreenshotDto } from './dto/create-screenshot.dto';
import { ScreenshotJobDto } from './dto/screenshot-job.dto';
import { UPLOAD_MAX_BYTES, UploadScreenshotDto, UploadScreenshotFormDto } from './dto/upload-screenshot.dto';
import { ScreenshotsService, UploadedDocument } from './screenshots.service';

const CREATE_EXAMPLES = {
  minimal: { summary: 'Only the URL (1280×800 PNG)', value: { url: 'https://example.com' } },
  fullPage: {
    summary: 'Full-page JPEG of a mobile viewport after 500 ms',
    value: { url: 'https://example.com', width: 390, height: 844, fullPage: true, format: 'jpeg', delay: 500 },
  },
};
const PENDING_JOB_EXAMPLE: ScreenshotJobDto = {
  id: 'scr_8cV1nQw3ZrT5yU7iO9pA2sD4',
  status: 'pending',
  url: null,
  error: null,
  createdAt: '2026-11-20T12:00:00.000Z',
  completedAt: null,
  format: 'png',
  width: 1280,
  height: 800,
  fullPage: false,
  clipped: false,
};
const DONE_JOB_EXAMPLE: ScreenshotJobDto = {
  ...PENDING_JOB_EXAMPLE,
  status: 'done',
  url: 'https://glimpse.example.com/files/Xq2vQd8Lr0tYb3nWc5mKz7hJf1pSg4aDe6uVi9oRl2x.png',
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
  constructor(private readonly screenshots: ScreenshotsService) {}

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
  @ApiErrorResponses(400, 401, 413, 415, 429, 500)
  create(@CurrentApiKey() caller: AuthenticatedKey, @Body() dto: CreateScreenshotDto): Promise<ScreenshotJobDto> {
    return this.screenshots.create(caller, dto);
  }

  @Post('upload')
  @HttpCode(202)
  @Idempotent()
  @UseInterceptors(
    FileInterceptor('file', { limits: { fileSize: UPLOAD_MAX_BYTES, files: 1, fields: 10, fieldSize: 1024, parts: 11 } }),
  )
  @ApiOperation({
    operationId: 'uploadScreenshot',
    summary: 'Enqueue a screenshot of an uploaded HTML document',
    description:
      'multipart/form-data with the document in `file` (`text/html`, at most 10 MiB) and the capture options of `POST /v1/screenshot` (except `url`) as form fields. ' +
      'The document is rendered as uploaded; what it loads goes through the SSRF guard. Counts one screenshot against the monthly quota and answers like `POST /v1/screenshot`. ' +
      'Send an `Idempotency-Key` to retry safely (fingerprint: the form fields and the SHA-256 of the file).',
  })
  @ApiConsumes('multipart/form-data')
  @ApiBody({
    type: UploadScreenshotFormDto,
    examples: { html: { summary: 'An HTML document at 800×600', value: { file: '<!doctype html><h1>Invoice 42</h1>', width: 800, height: 600 } } },
  })
  @ApiAcceptedJobResponse()
  @ApiErrorResponses(400, 401, 413, 415, 429, 500)
  upload(
    @CurrentApiKey() caller: AuthenticatedKey,
    @UploadedFile() file: UploadedDocument | undefined,
    @Body() dto: UploadScreenshotDto,
  ): Promise<ScreenshotJobDto> {
    return this.screenshots.createFromUpload(caller, file, dto);
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
