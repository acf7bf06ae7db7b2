import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiAcceptedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiKeyAuth, CurrentApiKey } from '../auth/current-api-key.decorator';
import type { AuthenticatedKey } from '../auth/api-keys.service';
import { ApiErrorResponses } from '../common/api-error-responses.decorator';
import { AUTHENTICATED_RESPONSE_HEADERS, IDEMPOTENCY_REPLAYED_RESPONSE_HEADER } from '../common/operational-headers';
import { Idempotent } from '../idempotency/idempotent.decorator';
import { CreateScreenshotDto } from './dto/create-screenshot.dto';
import { ScreenshotJobDto } from './dto/screenshot-job.dto';
import { ScreenshotsService } from './screenshots.service';

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
      'Send an `Idempotency-Key` to retry safely.',
  })
  @ApiAcceptedResponse({
    type: ScreenshotJobDto,
    description: 'Job accepted and counted against the monthly quota (a replay is not counted again)',
    headers: { ...AUTHENTICATED_RESPONSE_HEADERS, ...IDEMPOTENCY_REPLAYED_RESPONSE_HEADER },
  })
  @ApiErrorResponses(400, 401, 413, 415, 429, 500)
  create(@CurrentApiKey() caller: AuthenticatedKey, @Body() dto: CreateScreenshotDto): Promise<ScreenshotJobDto> {
    return this.screenshots.create(caller, dto);
  }

  @Get(':id')
  @ApiOperation({
    operationId: 'getScreenshot',
    summary: 'Get a screenshot job',
    description: 'Returns the job for polling. `url` is the result URL once `status` is `done`.',
  })
  @ApiOkResponse({ type: ScreenshotJobDto, headers: AUTHENTICATED_RESPONSE_HEADERS })
  @ApiErrorResponses(400, 401, 404, 500)
  get(@CurrentApiKey() caller: AuthenticatedKey, @Param('id') id: string): Promise<ScreenshotJobDto> {
    return this.screenshots.get(caller, id);
  }
}
