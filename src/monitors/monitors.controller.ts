import { Body, Controller, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBody, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { AuthenticatedKey } from '../auth/api-keys.service';
import { ApiKeyAuth, CurrentApiKey } from '../auth/current-api-key.decorator';
import { ApiErrorResponses } from '../common/api-error-responses.decorator';
import { ApiDeleteRoute, ApiGetRoute, ApiPlanLimitedCreateErrors, CHANGE_ERRORS } from '../common/api-resource-routes.decorator';
import { PROFILE_USE_400 } from '../profiles/profile-errors';
import { CursorPageQueryDto } from '../common/cursor-page-query.dto';
import { Idempotent } from '../idempotency/idempotent.decorator';
import {
  CheckStartedDto,
  CreateMonitorDto,
  MonitorCheckDto,
  MonitorCheckListDto,
  MonitorDto,
  MonitorListDto,
  PinBaselineDto,
  UpdateMonitorDto,
} from './dto/monitor.dto';
import { MonitorsService } from './monitors.service';

/** A monitor as the API shows it (OpenAPI examples; the monitor events' examples derive from it). */
export const MONITOR_EXAMPLE: MonitorDto = {
  id: 'mon_4fQx9LmZ2pRt7YvB1nKc3sDw',
  url: 'https://example.com/pricing',
  options: { width: 1280, fullPage: true },
  schedule: { intervalSeconds: 3600 },
  diff: { threshold: 0.1, minChangeRatio: 0.001, ignoreSelectors: ['.clock'], ignoreRegions: [] },
  enabled: true,
  pausedReason: null,
  description: 'Pricing page',
  apiKeyId: 'key_8cV1nQw3ZrT5yU7iO9pA2sD4',
  baseline: 'previous',
  baselineCheckId: null,
  createdAt: '2026-11-20T12:00:00.000Z',
  updatedAt: '2026-11-20T12:00:00.000Z',
  lastCheckAt: '2026-11-25T11:00:02.000Z',
  nextCheckAt: '2026-11-25T12:00:31.000Z',
  consecutiveFailures: 0,
  lastChange: { checkId: 'chk_8cV1nQw3ZrT5yU7iO9pA2sD4', at: '2026-11-25T11:00:09.000Z', diffRatio: 0.0123 },
};

/** The change {@link CHECK_EXAMPLE} found, as the check and `monitor.changed` both show it (OpenAPI examples). */
export const CHANGE_EXAMPLE = {
  diffRatio: 0.0123,
  diffPixels: 14170,
  regions: [{ x: 120, y: 40, width: 300, height: 48 }],
  screenshotUrl: 'https://glimpse.example.com/files/Jd0aZxY2mNw8PqRs4kq1Jd0aZxY2mNw8.png',
  baselineUrl: 'https://glimpse.example.com/files/Rs4kq1Jd0aZxY2mNw8PqRs4kq1Jd0a.png',
  diffUrl: 'https://glimpse.example.com/files/mNw8PqRs4kq1Jd0aZxY2mNw8PqRs4k.png',
};

/** A check that found a change (OpenAPI examples). */
export const CHECK_EXAMPLE: MonitorCheckDto = {
  id: 'chk_8cV1nQw3ZrT5yU7iO9pA2sD4',
  monitorId: MONITOR_EXAMPLE.id,
  jobId: 'scr_2mK8pQ4xW1vB8nR3sL6cZ7hT',
  status: 'changed',
  ...CHANGE_EXAMPLE,
  error: null,
  createdAt: '2026-11-25T11:00:02.000Z',
  completedAt: '2026-11-25T11:00:09.000Z',
};

const MONITOR_ID = ApiParam({ name: 'id', description: 'Monitor id (`mon_…`)', example: MONITOR_EXAMPLE.id });
/** Monitors: scheduled captures compared with the previous image (CONTRACT.md, "Monitors"). */
@ApiTags('monitors')
@ApiKeyAuth()
@Controller('v1/monitors')
export class MonitorsController {
  constructor(private readonly monitors: MonitorsService) {}

  @Post()
  @HttpCode(201)
  @Idempotent()
  @ApiOperation({
    operationId: 'createMonitor',
    summary: 'Create a monitor',
    description:
      'Captures `url` on a schedule and compares each image with the previous one (or a pinned baseline); a change fires `monitor.changed`. ' +
      "The monitor belongs to the calling API key: each check counts one screenshot against that key's quota. The first check is due at once. " +
      'Send an `Idempotency-Key` to retry safely.',
  })
  @ApiBody({
    type: CreateMonitorDto,
    examples: {
      hourly: { summary: 'Every hour', value: { url: 'https://example.com/pricing', schedule: { intervalSeconds: 3600 } } },
      cron: {
        summary: 'Weekdays at 9, ignoring a clock',
        value: {
          url: 'https://example.com',
          fullPage: true,
          schedule: { cron: '0 9 * * 1-5', timezone: 'Europe/Berlin' },
          diff: { ignoreSelectors: ['.clock'], minChangeRatio: 0.01 },
        },
      },
    },
  })
  @ApiCreatedResponse({ type: MonitorDto, description: 'Created', example: MONITOR_EXAMPLE })
  @ApiPlanLimitedCreateErrors('monitors as its plan allows (free 3, starter 50, pro 500)', PROFILE_USE_400, 404)
  create(@CurrentApiKey() caller: AuthenticatedKey, @Body() dto: CreateMonitorDto): Promise<MonitorDto> {
    return this.monitors.create(caller, dto);
  }

  @Get()
  @ApiOperation({
    operationId: 'listMonitors',
    summary: 'List monitors',
    description: "The account's monitors, newest first, `limit` per page; pass `nextCursor` as `cursor` for the next page.",
  })
  @ApiOkResponse({ type: MonitorListDto, description: 'A page of monitors', example: { data: [MONITOR_EXAMPLE], nextCursor: null } })
  @ApiErrorResponses(400, 401, 500)
  list(@CurrentApiKey() caller: AuthenticatedKey, @Query() query: CursorPageQueryDto): Promise<MonitorListDto> {
    return this.monitors.list(caller, query);
  }

  @ApiGetRoute(
    MONITOR_ID,
    {
      operationId: 'getMonitor',
      summary: 'Get a monitor',
      description: 'The monitor with its schedule state (`nextCheckAt`, `lastCheckAt`), failure count and last change.',
    },
    { type: MonitorDto, description: 'The monitor', example: MONITOR_EXAMPLE },
  )
  get(@CurrentApiKey() caller: AuthenticatedKey, @Param('id') id: string): Promise<MonitorDto> {
    return this.monitors.get(caller, id);
  }

  @Patch(':id')
  @MONITOR_ID
  @ApiOperation({
    operationId: 'updateMonitor',
    summary: 'Change a monitor',
    description:
      'Takes any field of the create body. `enabled: false` pauses the monitor (`pausedReason: "manual"`); `true` resumes it, clears its failure ' +
      'count and makes a check due now. Capture options given replace the monitor’s one by one (null removes one, e.g. `profile`), `diff` fields ' +
      'likewise; `schedule` is replaced whole.',
  })
  @ApiBody({ type: UpdateMonitorDto, examples: { pause: { summary: 'Pause', value: { enabled: false } } } })
  @ApiOkResponse({ type: MonitorDto, description: 'The monitor', example: MONITOR_EXAMPLE })
  @ApiErrorResponses(PROFILE_USE_400, 401, 404, 413, 415, 500)
  update(@CurrentApiKey() caller: AuthenticatedKey, @Param('id') id: string, @Body() dto: UpdateMonitorDto): Promise<MonitorDto> {
    return this.monitors.update(caller, id, dto);
  }

  @ApiDeleteRoute(MONITOR_ID, {
    operationId: 'deleteMonitor',
    summary: 'Delete a monitor',
    description: 'Deletes the monitor and its checks.',
  })
  remove(@CurrentApiKey() caller: AuthenticatedKey, @Param('id') id: string): Promise<void> {
    return this.monitors.remove(caller, id);
  }

  @Post(':id/check')
  @HttpCode(202)
  @MONITOR_ID
  @ApiOperation({
    operationId: 'createMonitorCheck',
    summary: 'Check a monitor now',
    description:
      'Starts a check outside the schedule (also of a paused monitor); it counts one screenshot against the monitor’s API key. Poll ' +
      '`GET /v1/monitors/{id}/checks` or the capture job (`GET /v1/screenshot/{jobId}`).',
  })
  @ApiAcceptedResponse({ type: CheckStartedDto, description: 'The check started', example: { checkId: CHECK_EXAMPLE.id } })
  @ApiErrorResponses(400, 401, 404, { status: 429, codes: ['PLAN_QUOTA_EXCEEDED', 'TOO_MANY_PENDING_JOBS'] }, 500)
  check(@CurrentApiKey() caller: AuthenticatedKey, @Param('id') id: string): Promise<CheckStartedDto> {
    return this.monitors.checkNow(caller, id);
  }

  @Post(':id/baseline')
  @HttpCode(200)
  @MONITOR_ID
  @ApiOperation({
    operationId: 'updateMonitorBaseline',
    summary: 'Pin a baseline',
    description:
      'Makes the image of one of the monitor’s successful checks the baseline every later check is compared with (`baseline: "pinned"`).',
  })
  @ApiBody({ type: PinBaselineDto, examples: { pin: { summary: 'Pin a check', value: { checkId: CHECK_EXAMPLE.id } } } })
  @ApiOkResponse({
    type: MonitorDto,
    description: 'The monitor',
    example: { ...MONITOR_EXAMPLE, baseline: 'pinned', baselineCheckId: CHECK_EXAMPLE.id },
  })
  @ApiErrorResponses(...CHANGE_ERRORS)
  pinBaseline(@CurrentApiKey() caller: AuthenticatedKey, @Param('id') id: string, @Body() dto: PinBaselineDto): Promise<MonitorDto> {
    return this.monitors.pinBaseline(caller, id, dto);
  }

  @Get(':id/checks')
  @MONITOR_ID
  @ApiOperation({
    operationId: 'listMonitorChecks',
    summary: "List a monitor's checks",
    description: 'Newest first, `limit` per page; pass `nextCursor` as `cursor` for the next page. Checks are kept 90 days.',
  })
  @ApiOkResponse({ type: MonitorCheckListDto, description: 'A page of checks', example: { data: [CHECK_EXAMPLE], nextCursor: null } })
  @ApiErrorResponses(400, 401, 404, 500)
  listChecks(
    @CurrentApiKey() caller: AuthenticatedKey,
    @Param('id') id: string,
    @Query() query: CursorPageQueryDto,
  ): Promise<MonitorCheckListDto> {
    return this.monitors.listChecks(caller, id, query);
  }
}
