import { ApiExtraModels, ApiProperty, ApiPropertyOptional, getSchemaPath, PartialType } from '@nestjs/swagger';
import { IsBoolean, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { z } from 'zod';
import { CAPTURE_LIMITS, CAPTURE_OPTION_NAMES, CaptureOptionName, CaptureOptionsInput } from '../../capture/capture-options';
import { IsHttpUrl, jsonSchemaOf, MatchesSchema } from '../../common/validation';
import { ImageRegionDto } from '../../webhooks/dto/webhook-events.dto';
import { captureOptionsDtoOf } from '../../screenshots/dto/create-screenshot.dto';
import { CHECK_STATUSES, CheckStatus } from '../monitor-check.entity';
import { PAUSED_REASONS, PausedReason } from '../monitor.entity';

/** Limits of monitors (CONTRACT.md, "Monitors"). */
export const MONITOR_LIMITS = {
  intervalMaxS: 2_592_000,
  descriptionMaxLength: 500,
  ignoreSelectorsMax: 50,
  ignoreRegionsMax: 50,
  cronMaxLength: 200,
} as const;

/**
 * Capture options a monitor does not take (CONTRACT.md, "Monitors": not `cache`/`extract`, and no PDF;
 * nor `storage`/`upload`: a check's image must stay with the service to be compared, and a presigned
 * upload URL serves one capture).
 */
const NOT_FOR_MONITORS: readonly CaptureOptionName[] = ['pdf', 'cache', 'cacheTtl', 'extract', 'markdownMode', 'storage', 'upload'];

/** The capture options a monitor takes: every option of the table but {@link NOT_FOR_MONITORS}. */
export const MONITOR_OPTION_NAMES = CAPTURE_OPTION_NAMES.filter((name) => !NOT_FOR_MONITORS.includes(name));

const intIn = (min: number, max: number) =>
  z.number('must be a number').int('must be an integer').min(min, `must be at least ${min}`).max(max, `must be at most ${max}`);

/** `schedule` (CONTRACT.md, "Monitors"); the configured minimum interval is checked by the service. */
export const scheduleSchema = z.union(
  [
    z.strictObject({
      intervalSeconds: intIn(1, MONITOR_LIMITS.intervalMaxS).meta({
        description: `Seconds between checks, from MONITOR_MIN_INTERVAL_S (default 300) to ${MONITOR_LIMITS.intervalMaxS}`,
        example: 3600,
      }),
    }),
    z.strictObject({
      cron: z
        .string('must be a string')
        .min(1, 'must not be empty')
        .max(MONITOR_LIMITS.cronMaxLength, `must be at most ${MONITOR_LIMITS.cronMaxLength} characters`)
        .meta({ description: 'Five-field cron expression (minute hour day-of-month month day-of-week)', example: '0 9 * * 1-5' }),
      timezone: z
        .string('must be a string')
        .max(64)
        .optional()
        .meta({ description: 'IANA time zone (default UTC)', example: 'Europe/Berlin' }),
    }),
  ],
  'must be { intervalSeconds } or { cron, timezone? }',
);

const regionSchema = z.strictObject({
  x: intIn(0, 1_000_000),
  y: intIn(0, 1_000_000),
  width: intIn(1, 1_000_000),
  height: intIn(1, 1_000_000),
});

/** `diff` (CONTRACT.md, "Monitors"). */
export const diffSchema = z.strictObject({
  threshold: z
    .number('must be a number')
    .min(0, 'must be at least 0')
    .max(1, 'must be at most 1')
    .optional()
    .meta({ description: 'Per-pixel colour distance above which a pixel differs (pixelmatch; anti-aliased pixels ignored)', default: 0.1 }),
  minChangeRatio: z
    .number('must be a number')
    .min(0, 'must be at least 0')
    .max(1, 'must be at most 1')
    .optional()
    .meta({ description: 'Changed pixels over all pixels at or above which a check is a change', default: 0.001 }),
  ignoreSelectors: z
    .array(
      z
        .string('must be a string')
        .min(1, 'must not be empty')
        .max(CAPTURE_LIMITS.selectorMaxLength, `must be at most ${CAPTURE_LIMITS.selectorMaxLength} characters`),
      'must be an array of CSS selectors',
    )
    .max(MONITOR_LIMITS.ignoreSelectorsMax, `must have at most ${MONITOR_LIMITS.ignoreSelectorsMax} selectors`)
    .optional()
    .meta({ description: 'Elements masked with a solid box before every capture', example: ['.clock', '#ad'] }),
  ignoreRegions: z
    .array(regionSchema, 'must be an array of { x, y, width, height }')
    .max(MONITOR_LIMITS.ignoreRegionsMax, `must have at most ${MONITOR_LIMITS.ignoreRegionsMax} regions`)
    .optional()
    .meta({ description: 'Rectangles of the image (px) left out of the comparison', example: [{ x: 0, y: 0, width: 1280, height: 80 }] }),
});

/** JSON Schemas of `schedule` and `diff` (OpenAPI and the MCP tool `create_monitor`). */
export const SCHEDULE_JSON_SCHEMA = jsonSchemaOf(scheduleSchema);
export const DIFF_JSON_SCHEMA = jsonSchemaOf(diffSchema);

export type ScheduleInput = z.output<typeof scheduleSchema>;
export type DiffInput = z.output<typeof diffSchema>;

/** Body of `POST /v1/monitors` (CONTRACT.md, "Monitors"): the URL, capture options, schedule and diff settings. Unknown fields are rejected. */
export class CreateMonitorDto extends captureOptionsDtoOf(MONITOR_OPTION_NAMES) {
  @ApiProperty({
    description: 'Absolute http(s) URL of the page to watch',
    maxLength: CAPTURE_LIMITS.urlMaxLength,
    example: 'https://example.com/pricing',
  })
  @IsHttpUrl(CAPTURE_LIMITS.urlMaxLength)
  url: string;

  @ApiProperty({ ...SCHEDULE_JSON_SCHEMA, description: 'When to check: a fixed interval, or cron in a time zone' })
  @MatchesSchema(scheduleSchema)
  schedule: ScheduleInput;

  @ApiPropertyOptional({ ...DIFF_JSON_SCHEMA, description: 'How images are compared' })
  @IsOptional()
  @MatchesSchema(diffSchema)
  diff?: DiffInput;

  @ApiPropertyOptional({ description: 'false: created paused (`pausedReason: "manual"`)', default: true })
  @IsOptional()
  @IsBoolean()
  enabled?: boolean;

  @ApiPropertyOptional({ description: 'Free-text label', maxLength: MONITOR_LIMITS.descriptionMaxLength, default: '' })
  @IsOptional()
  @IsString()
  @MaxLength(MONITOR_LIMITS.descriptionMaxLength)
  description?: string;
}

/** Body of `PATCH /v1/monitors/{id}`: any field of the create body; capture options given replace those of the monitor one by one. */
export class UpdateMonitorDto extends PartialType(CreateMonitorDto) {}

/** Body of `POST /v1/monitors/{id}/baseline`. */
export class PinBaselineDto {
  @ApiProperty({
    description: 'A successful check of this monitor whose image becomes the baseline',
    example: 'chk_8cV1nQw3ZrT5yU7iO9pA2sD4',
  })
  @IsString()
  @Matches(/^chk_[0-9A-Za-z]{24}$/, { message: 'must be a check id (chk_…)' })
  checkId: string;
}

/** The newest change of a monitor. */
export class MonitorLastChangeDto {
  @ApiProperty({ example: 'chk_8cV1nQw3ZrT5yU7iO9pA2sD4' })
  checkId: string;
  @ApiProperty({ format: 'date-time' })
  at: string;
  @ApiProperty({ example: 0.0123 })
  diffRatio: number;
}

/** A monitor (CONTRACT.md, "Monitors"). */
@ApiExtraModels(MonitorLastChangeDto)
export class MonitorDto {
  @ApiProperty({ example: 'mon_4fQx9LmZ2pRt7YvB1nKc3sDw' })
  id: string;
  @ApiProperty({ example: 'https://example.com/pricing' })
  url: string;
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'The capture options as given' })
  options: CaptureOptionsInput;
  @ApiProperty({ ...SCHEDULE_JSON_SCHEMA })
  schedule: { intervalSeconds: number } | { cron: string; timezone: string };
  @ApiProperty({ ...DIFF_JSON_SCHEMA, description: 'The comparison settings, defaults applied' })
  diff: { threshold: number; minChangeRatio: number; ignoreSelectors: string[]; ignoreRegions: ImageRegionDto[] };
  @ApiProperty()
  enabled: boolean;
  @ApiProperty({ enum: PAUSED_REASONS, nullable: true, type: String })
  pausedReason: PausedReason | null;
  @ApiProperty()
  description: string;
  @ApiProperty({ description: 'The API key whose quota the checks use', example: 'key_8cV1nQw3ZrT5yU7iO9pA2sD4' })
  apiKeyId: string;
  @ApiProperty({ enum: ['previous', 'pinned'], description: '`previous`: each check is compared with the last successful one' })
  baseline: 'previous' | 'pinned';
  @ApiProperty({ type: String, nullable: true, description: 'The pinned check, with `baseline: "pinned"`' })
  baselineCheckId: string | null;
  @ApiProperty({ format: 'date-time' })
  createdAt: string;
  @ApiProperty({ format: 'date-time' })
  updatedAt: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  lastCheckAt: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'Null while paused' })
  nextCheckAt: string | null;
  @ApiProperty({ description: 'Failed checks in a row' })
  consecutiveFailures: number;
  @ApiProperty({
    oneOf: [{ $ref: getSchemaPath(MonitorLastChangeDto) }, { type: 'null' }],
    description: 'The newest check that found a change; null before any',
  })
  lastChange: MonitorLastChangeDto | null;
}

/** A page of monitors, newest first. */
export class MonitorListDto {
  @ApiProperty({ type: [MonitorDto] })
  data: MonitorDto[];
  @ApiProperty({ type: 'string', nullable: true, description: 'Pass as `cursor` for the next page; null on the last page' })
  nextCursor: string | null;
}

/** One check of a monitor (CONTRACT.md, "Monitors"). */
export class MonitorCheckDto {
  @ApiProperty({ example: 'chk_8cV1nQw3ZrT5yU7iO9pA2sD4' })
  id: string;
  @ApiProperty({ example: 'mon_4fQx9LmZ2pRt7YvB1nKc3sDw' })
  monitorId: string;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The capture job (`GET /v1/screenshot/{jobId}`); null when it could not be accepted',
  })
  jobId: string | null;
  @ApiProperty({ enum: CHECK_STATUSES, description: '`pending` until the capture ended and was compared' })
  status: CheckStatus;
  @ApiProperty({ type: Number, nullable: true, description: 'Changed pixels over all pixels, 0–1' })
  diffRatio: number | null;
  @ApiProperty({ type: Number, nullable: true })
  diffPixels: number | null;
  @ApiProperty({ type: [ImageRegionDto], description: 'Bounding boxes of the changed areas, at most 20' })
  regions: ImageRegionDto[];
  @ApiProperty({ type: String, nullable: true })
  screenshotUrl: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'The image this check was compared with' })
  baselineUrl: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'PNG of the comparison (changes only): unchanged pixels faded, changed pixels red',
  })
  diffUrl: string | null;
  @ApiProperty({ type: String, nullable: true })
  error: string | null;
  @ApiProperty({ format: 'date-time' })
  createdAt: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  completedAt: string | null;
}

/** A page of checks, newest first. */
export class MonitorCheckListDto {
  @ApiProperty({ type: [MonitorCheckDto] })
  data: MonitorCheckDto[];
  @ApiProperty({ type: 'string', nullable: true, description: 'Pass as `cursor` for the next page; null on the last page' })
  nextCursor: string | null;
}

/** The answer of `POST /v1/monitors/{id}/check`. */
export class CheckStartedDto {
  @ApiProperty({ example: 'chk_8cV1nQw3ZrT5yU7iO9pA2sD4' })
  checkId: string;
}
