import { Body, Controller, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ApiAcceptedResponse, ApiBody, ApiExtraModels, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { AuthenticatedKey } from '../auth/api-keys.service';
import { ApiKeyAuth, CurrentApiKey } from '../auth/current-api-key.decorator';
import { ApiErrorResponses } from '../common/api-error-responses.decorator';
import { PROFILE_USE_400 } from '../profiles/profile-errors';
import { AUTHENTICATED_RESPONSE_HEADERS, IDEMPOTENCY_REPLAYED_RESPONSE_HEADER } from '../common/operational-headers';
import { Idempotent } from '../idempotency/idempotent.decorator';
import { PreferWait } from '../idempotency/prefer-wait';
import { ApiPreferWait } from '../idempotency/prefer-wait.openapi';
import { CreateRunDto } from './dto/create-run.dto';
import { ListRunsQueryDto, RunDto, RunListDto } from './dto/run.dto';
import { STEP_DTOS } from './dto/run-step.dto';
import { RunsService } from './runs.service';
import { runFingerprint } from './run-fingerprint';

const LOGIN_FLOW_EXAMPLE = {
  summary: 'Sign in, go to the dashboard, take a screenshot',
  value: {
    url: 'https://app.example.com/login',
    steps: [
      { action: 'fill', selector: '#email', value: 'ada@example.com' },
      { action: 'fill', selector: '#password', value: 'correct horse battery staple', sensitive: true },
      { action: 'click', selector: 'button[type=submit]' },
      { action: 'waitForUrl', url: '**/dashboard' },
      { action: 'screenshot', name: 'dashboard', fullPage: true },
    ],
    width: 1280,
    height: 800,
    timeoutMs: 60000,
  },
};
const PENDING_RUN_EXAMPLE: RunDto = {
  id: 'run_8cV1nQw3ZrT5yU7iO9pA2sD4',
  status: 'pending',
  url: 'https://app.example.com/login',
  finalUrl: null,
  pageTitle: null,
  videoUrl: null,
  consoleErrorCount: 0,
  networkErrorCount: 0,
  consoleErrors: [],
  networkErrors: [],
  steps: [],
  finalizationError: null,
  failure: null,
  savedProfileId: null,
  createdAt: '2026-11-20T12:00:00.000Z',
  startedAt: null,
  completedAt: null,
};
const COMPLETED_RUN_EXAMPLE: RunDto = {
  ...PENDING_RUN_EXAMPLE,
  status: 'completed',
  finalUrl: 'https://app.example.com/dashboard',
  pageTitle: 'Dashboard',
  videoUrl: 'https://glimpse.example.com/files/Xq2vQd8Lr0tYb3nWc5mKz7hJf1pSg4aDe6uVi9oRl2x.webm',
  consoleErrorCount: 1,
  networkErrorCount: 1,
  consoleErrors: [{ text: 'chart failed to render', url: 'https://app.example.com/dashboard', lineNumber: 12 }],
  networkErrors: [{ url: 'https://app.example.com/missing.png', method: 'GET', status: 404, failure: null }],
  steps: [
    { index: 0, action: 'fill', status: 'ok', durationMs: 48, error: null, screenshotUrl: null, result: null },
    { index: 1, action: 'fill', status: 'ok', durationMs: 31, error: null, screenshotUrl: null, result: null },
    { index: 2, action: 'click', status: 'ok', durationMs: 95, error: null, screenshotUrl: null, result: null },
    { index: 3, action: 'waitForUrl', status: 'ok', durationMs: 210, error: null, screenshotUrl: null, result: null },
    {
      index: 4,
      action: 'screenshot',
      status: 'ok',
      durationMs: 120,
      error: null,
      screenshotUrl: 'https://glimpse.example.com/files/Pz4mWq9Kc2xVb7nLr5tYd1hJf8sGa3eUo6iQl0wRk2y.png',
      result: null,
    },
  ],
  startedAt: '2026-11-20T12:00:00.210Z',
  completedAt: '2026-11-20T12:00:03.904Z',
};

@ApiTags('runs')
@ApiKeyAuth()
@ApiExtraModels(...Object.values(STEP_DTOS))
@Controller('v1/runs')
export class RunsController {
  constructor(
    private readonly runs: RunsService,
    private readonly preferWait: PreferWait,
  ) {}

  @Post()
  @HttpCode(202)
  @Idempotent({ fingerprint: runFingerprint })
  @ApiOperation({
    operationId: 'createRun',
    summary: 'Start a browser session run',
    description:
      "Opens a fresh, isolated browser session on `url`, performs `steps` in order (each bounded by its `timeoutMs` within the run's `timeoutMs`), " +
      'records a WebM video, and collects console and network errors. Counts one screenshot against the monthly quota and answers at once with the run, ' +
      '`pending`. Poll `GET /v1/runs/{id}` or subscribe to `run.completed` / `run.failed`. A `fill` step with `sensitive: true` keeps its value out of ' +
      'everything the service stores, logs or returns. Send an `Idempotency-Key` to retry safely.',
  })
  @ApiBody({
    type: CreateRunDto,
    examples: {
      loginFlow: LOGIN_FLOW_EXAMPLE,
      minimal: { summary: 'Record one page for 60 s at most', value: { url: 'https://example.com' } },
    },
  })
  @ApiAcceptedResponse({
    type: RunDto,
    description: 'Run accepted and counted against the monthly quota (a replay is not counted again)',
    headers: { ...AUTHENTICATED_RESPONSE_HEADERS, ...IDEMPOTENCY_REPLAYED_RESPONSE_HEADER },
    example: PENDING_RUN_EXAMPLE,
  })
  @ApiPreferWait(RunDto, COMPLETED_RUN_EXAMPLE)
  @ApiErrorResponses(
    PROFILE_USE_400,
    401,
    { status: 403, codes: ['PLAN_LIMIT_REACHED'], description: 'saveProfile would create one more profile than the plan allows' },
    404,
    413,
    415,
    429,
    500,
  )
  async create(
    @CurrentApiKey() caller: AuthenticatedKey,
    @Body() dto: CreateRunDto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<RunDto> {
    const run = await this.runs.create(caller, dto);
    return this.preferWait.answer(
      req,
      res,
      run,
      (id) => this.runs.get(caller, id),
      (r) => r.status === 'completed' || r.status === 'failed',
    );
  }

  @Get()
  @ApiOperation({
    operationId: 'listRuns',
    summary: 'List runs',
    description: "The account's runs, newest first, `limit` per page; pass `nextCursor` as `cursor` for the next page.",
  })
  @ApiOkResponse({
    type: RunListDto,
    description: 'A page of runs',
    headers: AUTHENTICATED_RESPONSE_HEADERS,
    example: { data: [COMPLETED_RUN_EXAMPLE], nextCursor: null },
  })
  @ApiErrorResponses({ status: 400, codes: ['VALIDATION_FAILED', 'INVALID_ORGANIZATION_ID'] }, 401, 500)
  list(@CurrentApiKey() caller: AuthenticatedKey, @Query() query: ListRunsQueryDto): Promise<RunListDto> {
    return this.runs.list(caller, query);
  }

  @Get(':id')
  @ApiOperation({
    operationId: 'getRun',
    summary: 'Get a run',
    description: 'Returns the run for polling; its video and step screenshots are capability URLs.',
  })
  @ApiParam({ name: 'id', description: 'Run id from `createRun`', example: 'run_8cV1nQw3ZrT5yU7iO9pA2sD4' })
  @ApiOkResponse({ type: RunDto, description: 'The run', headers: AUTHENTICATED_RESPONSE_HEADERS, example: COMPLETED_RUN_EXAMPLE })
  @ApiErrorResponses({ status: 400, codes: ['INVALID_ORGANIZATION_ID'] }, 401, 404, 500)
  get(@CurrentApiKey() caller: AuthenticatedKey, @Param('id') id: string): Promise<RunDto> {
    return this.runs.get(caller, id);
  }

  @Post(':id/cancel')
  @HttpCode(202)
  @Idempotent()
  @ApiOperation({
    operationId: 'cancelRun',
    summary: 'Cancel a run',
    description:
      'A `pending` run ends `failed` with `failure.stage` `canceled` at once; a `running` one stops at its current step and ends the same way once ' +
      'what it recorded (video, screenshots, errors) is stored. Answers with the run as it is now. Send an `Idempotency-Key` to retry safely: ' +
      'a retry gets the first answer back instead of 409 `RUN_ALREADY_ENDED`.',
  })
  @ApiParam({ name: 'id', description: 'Run id', example: 'run_8cV1nQw3ZrT5yU7iO9pA2sD4' })
  @ApiAcceptedResponse({
    type: RunDto,
    description: 'Cancel accepted',
    headers: AUTHENTICATED_RESPONSE_HEADERS,
    example: PENDING_RUN_EXAMPLE,
  })
  @ApiErrorResponses(
    { status: 400, codes: ['INVALID_ORGANIZATION_ID'] },
    401,
    404,
    { status: 409, codes: ['RUN_ALREADY_ENDED'], description: 'The run already ended' },
    500,
  )
  cancel(@CurrentApiKey() caller: AuthenticatedKey, @Param('id') id: string): Promise<RunDto> {
    return this.runs.cancel(caller, id);
  }
}
