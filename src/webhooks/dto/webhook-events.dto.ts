import { Type } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { ArtifactEventFieldsDto } from '../../results/artifact-fields.dto';
import { FULL_PAGE_MAX_HEIGHT_PX, JOB_FORMATS, JobFormat } from '../../results/result-formats';
import { EVENT_TYPES } from '../../events/event-types';
import type {
  EndpointDisabledData,
  ImageRegion,
  MonitorChangedData,
  MonitorFailedData,
  CrawlEndedData,
  ProfileExpiredData,
  EventDataMap,
  EventType,
  QuotaWarningData,
  RunCompletedData,
  RunFailedData,
  ScreenshotCompletedData,
  ScreenshotFailedData,
  TestPingData,
} from '../../events/event-types';

/*
 * Event payloads as receivers get them (spec section 6.1, CONTRACT.md "Quotas" and "Webhooks").
 * Documentation only: the OpenAPI document includes these as schemas (WEBHOOK_EVENT_SCHEMAS). Each
 * data class implements its shape in the event map (src/events/event-types.ts), which is what
 * `EventsService.publish` takes, so every field sent is documented here.
 * Receivers must ignore fields and event types they do not know (spec section 6.2).
 */

/**
 * `data` of `screenshot.completed`; its artifact fields (`publicUrl`, `thumbnailUrl`, `extracted`) and their
 * schemas are those of the artifacts table (src/results/artifacts.ts), inherited from {@link ArtifactEventFieldsDto}.
 */
export class ScreenshotCompletedDataDto extends ArtifactEventFieldsDto implements ScreenshotCompletedData {
  @ApiProperty({ description: 'Screenshot job id', example: 'scr_8cV1nQw3ZrT5yU7iO9pA2sD4' })
  screenshotId: string;
  @ApiProperty({ description: 'The captured page URL', example: 'https://example.com' })
  url: string;
  @ApiProperty({ enum: JOB_FORMATS })
  format: JobFormat;
  @ApiProperty({ type: 'integer', description: 'Viewport width in px' })
  width: number;
  @ApiProperty({ type: 'integer', description: 'Viewport height in px' })
  height: number;
  @ApiProperty({ description: 'Whether the full scrollable page was captured' })
  fullPage: boolean;
  @ApiProperty({
    description: `True when a full-page capture was cut: at fullPageMaxHeight (default ${FULL_PAGE_MAX_HEIGHT_PX.toLocaleString('en-US')} image px), or where width × height × scale² reaches MAX_IMAGE_PIXELS (the image size cap)`,
  })
  clipped: boolean;
  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: "HTTP status of the page's main document; null for an uploaded document",
    example: 200,
  })
  targetStatus: number | null;
}

/** `data` of `screenshot.failed`. */
export class ScreenshotFailedDataDto implements ScreenshotFailedData {
  @ApiProperty({ description: 'Screenshot job id', example: 'scr_8cV1nQw3ZrT5yU7iO9pA2sD4' })
  screenshotId: string;
  @ApiProperty({ description: 'The page URL that could not be captured' })
  url: string;
  @ApiProperty({ description: "Failure description (as the job's `error`)", example: 'net::ERR_CONNECTION_REFUSED' })
  error: string;
  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: "HTTP status of the page's main document when it answered before the failure (e.g. 404 with failOnHttpError), else null",
    example: null,
  })
  targetStatus: number | null;
}

/** The fields `run.completed` and `run.failed` share (CONTRACT.md, "Browser session runs"). */
export abstract class RunEndedDataDto {
  @ApiProperty({ description: 'Run id', example: 'run_3pQ8xW1vB8nR3sL6cZ7hT2mK' })
  runId: string;
  @ApiProperty({ type: 'integer', description: "The page's console errors and uncaught exceptions" })
  consoleErrorCount: number;
  @ApiProperty({ type: 'integer', description: 'Requests that failed or were answered 4xx/5xx' })
  networkErrorCount: number;
  @ApiProperty({ type: 'integer', description: 'Steps in the run' })
  stepCount: number;
  @ApiProperty({ type: 'integer', description: 'Duration of the run in ms' })
  durationMs: number;
}

/** `data` of `run.completed` (CONTRACT.md, "Browser session runs"). */
export class RunCompletedDataDto extends RunEndedDataDto implements RunCompletedData {
  @ApiProperty({ enum: ['completed'] })
  status: 'completed';
  @ApiProperty({ description: 'URL of the page when the run ended' })
  finalUrl: string;
  @ApiProperty({ description: 'Title of the page when the run ended' })
  pageTitle: string;
  @ApiProperty({
    type: 'string',
    nullable: true,
    description: 'WebM video capability URL; null when the run was started with `video: false`',
  })
  videoUrl: string | null;
}

/** `data` of `run.failed` (CONTRACT.md, "Browser session runs"). */
export class RunFailedDataDto extends RunEndedDataDto implements RunFailedData {
  @ApiProperty({ enum: ['failed'] })
  status: 'failed';
  @ApiProperty({ type: 'string', nullable: true, description: 'URL of the page when the run ended; null when no page loaded' })
  finalUrl: string | null;
  @ApiProperty({ type: 'string', nullable: true, description: 'Title of the page when the run ended; null when no page loaded' })
  pageTitle: string | null;
  @ApiProperty({ type: 'string', nullable: true, description: 'WebM video of what was recorded up to the failure; null without video' })
  videoUrl: string | null;
  @ApiProperty({
    description: 'Why the run failed (customer-safe)',
    example: 'step 3 (click "#buy"): selector not visible within 10000 ms',
  })
  finalizationError: string;
}

/** `data` of `quota.warning` (spec section 8, CONTRACT.md "Quotas"). */
export class QuotaWarningDataDto implements QuotaWarningData {
  @ApiProperty({ enum: [0.8, 0.95], description: 'Share of the cap that usage reached' })
  threshold: number;
  @ApiProperty({ type: 'integer', description: 'Screenshots used this month by the key' })
  used: number;
  @ApiProperty({ type: 'integer', description: 'Monthly cap of the plan' })
  limit: number;
  @ApiProperty({ type: 'integer', description: '`limit - used`, not below 0' })
  remaining: number;
  @ApiProperty({ description: 'When the window resets: the 1st of next month, 00:00 UTC (ISO 8601)' })
  resetAt: string;
  @ApiProperty({ description: 'The API key whose usage crossed the threshold', example: 'key_9xW1vB8nR3sL6cZ7hT2mKpQ4' })
  apiKeyId: string;
}

/** `data` of `test.ping`. */
export class TestPingDataDto implements TestPingData {
  @ApiProperty({ description: 'The endpoint the ping was sent to', example: 'we_4fQx9LmZ2pRt7YvB1nKc3sDw' })
  endpointId: string;
  @ApiProperty({ example: 'Test event from Glimpse' })
  message: string;
}

/** `data` of `endpoint.disabled` (CONTRACT.md "Webhooks", auto-disable). */
export class EndpointDisabledDataDto implements EndpointDisabledData {
  @ApiProperty({ description: 'The endpoint that was disabled (not the one receiving this event)', example: 'we_4fQx9LmZ2pRt7YvB1nKc3sDw' })
  endpointId: string;
  @ApiProperty({ description: 'Its URL', example: 'https://example.com/hooks/glimpse' })
  url: string;
  @ApiProperty({
    enum: ['failing'],
    description: '`failing`: no successful attempt for `WEBHOOK_DISABLE_AFTER_S` and a delivery exhausted in that time',
  })
  reason: 'failing';
  @ApiProperty({ description: 'When it was disabled (ISO 8601 UTC)', example: '2026-11-25T12:00:00.000Z' })
  disabledAt: string;
}

/** A rectangle of an image, px from its top-left corner. */
export class ImageRegionDto implements ImageRegion {
  @ApiProperty({ example: 120 })
  x: number;
  @ApiProperty({ example: 40 })
  y: number;
  @ApiProperty({ example: 300 })
  width: number;
  @ApiProperty({ example: 48 })
  height: number;
}

/** `data` of `monitor.changed` (CONTRACT.md, "Monitors"). */
export class MonitorChangedDataDto implements MonitorChangedData {
  @ApiProperty({ example: 'mon_4fQx9LmZ2pRt7YvB1nKc3sDw' })
  monitorId: string;
  @ApiProperty({ example: 'chk_8cV1nQw3ZrT5yU7iO9pA2sD4' })
  checkId: string;
  @ApiProperty({ description: 'The monitored page URL', example: 'https://example.com/pricing' })
  url: string;
  @ApiProperty({ description: 'Changed pixels over all pixels, 0–1 (1 when the image size changed)', example: 0.0123 })
  diffRatio: number;
  @ApiProperty({ description: 'Changed pixels', example: 14170 })
  diffPixels: number;
  @ApiProperty({ type: [ImageRegionDto], description: 'Bounding boxes of the changed areas, at most 20' })
  regions: ImageRegionDto[];
  @ApiProperty({ type: String, nullable: true, description: 'The new image' })
  screenshotUrl: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'The image it was compared with' })
  baselineUrl: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'PNG of the comparison: unchanged pixels faded, changed pixels red' })
  diffUrl: string | null;
}

/** `data` of `monitor.failed` (CONTRACT.md, "Monitors"). */
export class MonitorFailedDataDto implements MonitorFailedData {
  @ApiProperty({ example: 'mon_4fQx9LmZ2pRt7YvB1nKc3sDw' })
  monitorId: string;
  @ApiProperty({ example: 'chk_8cV1nQw3ZrT5yU7iO9pA2sD4' })
  checkId: string;
  @ApiProperty({ example: 'https://example.com/pricing' })
  url: string;
  @ApiProperty({ description: 'Customer-safe failure description', example: 'navigation timed out after 30000 ms' })
  error: string;
  @ApiProperty({ description: 'Failed checks in a row, this one included', example: 1 })
  consecutiveFailures: number;
  @ApiProperty({ description: 'Whether this failure paused the monitor (`pausedReason: "failing"`)', example: false })
  paused: boolean;
}

/** `data` of `crawl.completed` and `crawl.failed` (CONTRACT.md, "Crawls"). */
export class CrawlEndedDataDto implements CrawlEndedData {
  @ApiProperty({ example: 'crl_3fJ9kLmN2pQr5sTu7vWx9yZa' })
  crawlId: string;
  @ApiProperty({ description: 'The start URL', example: 'https://example.com/' })
  url: string;
  @ApiProperty({ enum: ['completed', 'failed'] })
  status: 'completed' | 'failed';
  @ApiProperty({ description: 'Pages found (in scope, each once)', example: 42 })
  pagesFound: number;
  @ApiProperty({ description: 'Pages given a job (each counted against the quota)', example: 42 })
  pagesQueued: number;
  @ApiProperty({ description: 'Jobs ended done', example: 41 })
  pagesDone: number;
  @ApiProperty({ description: 'Jobs ended failed', example: 1 })
  pagesFailed: number;
  @ApiProperty({ type: String, nullable: true, enum: ['maxPages', 'exhausted', 'canceled', 'quota'], example: 'exhausted' })
  stoppedReason: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'Capability URL of the ZIP bundle (result files and manifest.json)' })
  bundleUrl: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'Customer-safe reason of a failed crawl', example: null })
  error: string | null;
}

/** `data` of `profile.expired` (CONTRACT.md, "Browser profiles"). */
export class ProfileExpiredDataDto implements ProfileExpiredData {
  @ApiProperty({ example: 'prf_4fQx9LmZ2pRt7YvB1nKc3sDw' })
  profileId: string;
  @ApiProperty({ description: "The profile's name", example: 'Staging admin' })
  name: string;
  @ApiProperty({
    description: 'The capture job (a monitor check is one) that found the profile expired',
    example: 'scr_8cV1nQw3ZrT5yU7iO9pA2sD4',
  })
  screenshotId: string;
  @ApiProperty({ example: 'https://app.example.com/dashboard' })
  url: string;
  @ApiProperty({ description: 'The `profileCheck` selector that was not found', example: '#account-menu' })
  selector: string;
}

/** Fields common to every event envelope (spec section 2.5 plus CONTRACT.md's `id`). */
export class WebhookEventBaseDto {
  @ApiProperty({ description: 'Event id; the same on every delivery of the event', example: 'evt_2mK8pQ4xW1vB8nR3sL6cZ7hT' })
  id: string;
  @ApiProperty({ description: 'ISO 8601 UTC with milliseconds', example: '2026-11-20T12:00:00.000Z' })
  createdAt: string;
}

/**
 * The `data` class of every event type (typed by the event map: a type without one, or a class lacking a
 * field that is sent, does not compile).
 */
const WEBHOOK_EVENT_DATA: { readonly [K in EventType]: Type<EventDataMap[K]> } = {
  'screenshot.completed': ScreenshotCompletedDataDto,
  'screenshot.failed': ScreenshotFailedDataDto,
  'run.completed': RunCompletedDataDto,
  'run.failed': RunFailedDataDto,
  'quota.warning': QuotaWarningDataDto,
  'test.ping': TestPingDataDto,
  'endpoint.disabled': EndpointDisabledDataDto,
  'monitor.changed': MonitorChangedDataDto,
  'monitor.failed': MonitorFailedDataDto,
  'crawl.completed': CrawlEndedDataDto,
  'crawl.failed': CrawlEndedDataDto,
  'profile.expired': ProfileExpiredDataDto,
};

/** The OpenAPI schema name of a type's envelope: `screenshot.completed` → `ScreenshotCompletedEventDto`. */
export function envelopeSchemaName(type: EventType): string {
  return `${type.replace(/(^|\.)([a-z])/g, (_, _dot: string, letter: string) => letter.toUpperCase())}EventDto`;
}

/**
 * The envelope class of event type `type` (spec section 2.5): {@link WebhookEventBaseDto}'s `id` and
 * `createdAt`, then `type` (the one value `type`) and `data` (`data`'s schema), named
 * {@link envelopeSchemaName} so the OpenAPI document names its schema as before.
 */
function envelopeOf<K extends EventType>(type: K, data: Type<EventDataMap[K]>): Type<{ type: K; data: EventDataMap[K] }> {
  class Envelope extends WebhookEventBaseDto {
    type: K;
    data: EventDataMap[K];
  }
  ApiProperty({ enum: [type] })(Envelope.prototype, 'type');
  ApiProperty({ type: data })(Envelope.prototype, 'data');
  Object.defineProperty(Envelope, 'name', { value: envelopeSchemaName(type) });
  return Envelope;
}

/**
 * The envelope class of every event type, for `SwaggerModule.createDocument(..., { extraModels })` and the
 * `webhooks` section (one entry per type), each derived from the event map by {@link envelopeOf}.
 */
export const WEBHOOK_EVENT_SCHEMAS = Object.fromEntries(
  EVENT_TYPES.map((type) => [type, envelopeOf(type, WEBHOOK_EVENT_DATA[type] as Type<EventDataMap[typeof type]>)]),
) as { readonly [K in EventType]: Type<{ type: K; data: EventDataMap[K] }> };
