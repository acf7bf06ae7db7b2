import { ApiProperty } from '@nestjs/swagger';
import { IMAGE_FORMATS } from '../capture/image-format';

/*
 * Event payloads as receivers get them (spec sections 2.5 and 6.1, CONTRACT.md "Quotas" and "Webhooks"),
 * for the OpenAPI document only. Placeholder until the webhooks module's own DTOs
 * (src/webhooks/dto) are on main: the class names are the schema names, so swapping keeps the document.
 */

/** `data` of `screenshot.completed`. */
export class ScreenshotCompletedDataDto {
  @ApiProperty({ description: 'Screenshot job id', example: 'scr_8cV1nQw3ZrT5yU7iO9pA2sD4' })
  screenshotId: string;
  @ApiProperty({ description: 'The captured page URL', example: 'https://example.com' })
  url: string;
  @ApiProperty({ description: 'Result URL (capability URL, no API key needed)', example: 'https://glimpse.example.com/files/2vQdx1.png' })
  publicUrl: string;
  @ApiProperty({ enum: IMAGE_FORMATS })
  format: string;
  @ApiProperty({ type: 'integer', description: 'Viewport width in px' })
  width: number;
  @ApiProperty({ type: 'integer', description: 'Viewport height in px' })
  height: number;
}

/** `data` of `screenshot.failed`. */
export class ScreenshotFailedDataDto {
  @ApiProperty({ description: 'Screenshot job id', example: 'scr_8cV1nQw3ZrT5yU7iO9pA2sD4' })
  screenshotId: string;
  @ApiProperty({ description: 'The page URL that could not be captured', example: 'https://example.com' })
  url: string;
  @ApiProperty({ description: 'Failure description (the job’s `error`)', example: 'net::ERR_CONNECTION_REFUSED' })
  error: string;
}

/** `data` of `run.completed` (browser session runs). */
export class RunCompletedDataDto {
  @ApiProperty({ example: 'run_3pQ8xW1vB8nR3sL6cZ7hT2mK' })
  runId: string;
  @ApiProperty({ example: 'https://example.com/done' })
  finalUrl: string;
  @ApiProperty({ example: 'Example Domain' })
  pageTitle: string;
  @ApiProperty({ type: 'string', nullable: true })
  videoUrl: string | null;
  @ApiProperty({ type: 'integer' })
  consoleErrorCount: number;
  @ApiProperty({ type: 'integer' })
  networkErrorCount: number;
}

/** `data` of `run.failed`. */
export class RunFailedDataDto extends RunCompletedDataDto {
  @ApiProperty({ example: 'video upload failed' })
  finalizationError: string;
}

/** `data` of `quota.warning`. */
export class QuotaWarningDataDto {
  @ApiProperty({ enum: [0.8, 0.95], description: 'Share of the cap that usage reached' })
  threshold: number;
  @ApiProperty({ type: 'integer', description: 'Screenshots used this month by the key' })
  used: number;
  @ApiProperty({ type: 'integer', description: 'Monthly cap of the plan' })
  limit: number;
  @ApiProperty({ type: 'integer', description: '`limit - used`, not below 0' })
  remaining: number;
  @ApiProperty({ description: 'When the window resets: the 1st of next month, 00:00 UTC (ISO 8601)', example: '2026-12-01T00:00:00.000Z' })
  resetAt: string;
  @ApiProperty({ description: 'The API key whose usage crossed the threshold', example: 'key_9xW1vB8nR3sL6cZ7hT2mKpQ4' })
  apiKeyId: string;
}

/** `data` of `test.ping`. */
export class TestPingDataDto {
  @ApiProperty({ description: 'The endpoint the ping was sent to', example: 'we_4fQx9LmZ2pRt7YvB1nKc3sDw' })
  endpointId: string;
  @ApiProperty({ example: 'Test event from Glimpse' })
  message: string;
}

/** Fields common to every event envelope. */
export class WebhookEventBaseDto {
  @ApiProperty({ description: 'Event id; the same on every delivery of the event', example: 'evt_2mK8pQ4xW1vB8nR3sL6cZ7hT' })
  id: string;
  @ApiProperty({ description: 'ISO 8601 UTC with milliseconds', example: '2026-11-20T12:00:00.000Z' })
  createdAt: string;
}

export class ScreenshotCompletedEventDto extends WebhookEventBaseDto {
  @ApiProperty({ enum: ['screenshot.completed'] })
  type: 'screenshot.completed';
  @ApiProperty({ type: ScreenshotCompletedDataDto })
  data: ScreenshotCompletedDataDto;
}

export class ScreenshotFailedEventDto extends WebhookEventBaseDto {
  @ApiProperty({ enum: ['screenshot.failed'] })
  type: 'screenshot.failed';
  @ApiProperty({ type: ScreenshotFailedDataDto })
  data: ScreenshotFailedDataDto;
}

export class RunCompletedEventDto extends WebhookEventBaseDto {
  @ApiProperty({ enum: ['run.completed'] })
  type: 'run.completed';
  @ApiProperty({ type: RunCompletedDataDto })
  data: RunCompletedDataDto;
}

export class RunFailedEventDto extends WebhookEventBaseDto {
  @ApiProperty({ enum: ['run.failed'] })
  type: 'run.failed';
  @ApiProperty({ type: RunFailedDataDto })
  data: RunFailedDataDto;
}

export class QuotaWarningEventDto extends WebhookEventBaseDto {
  @ApiProperty({ enum: ['quota.warning'] })
  type: 'quota.warning';
  @ApiProperty({ type: QuotaWarningDataDto })
  data: QuotaWarningDataDto;
}

export class TestPingEventDto extends WebhookEventBaseDto {
  @ApiProperty({ enum: ['test.ping'] })
  type: 'test.ping';
  @ApiProperty({ type: TestPingDataDto })
  data: TestPingDataDto;
}

/** Every event envelope class, one per event type. */
export const WEBHOOK_EVENT_SCHEMAS = [
  ScreenshotCompletedEventDto,
  ScreenshotFailedEventDto,
  RunCompletedEventDto,
  RunFailedEventDto,
  QuotaWarningEventDto,
  TestPingEventDto,
] as const;

/** One example envelope per event type, for the document's webhook request bodies. */
export const WEBHOOK_EVENT_EXAMPLES: Record<string, { id: string; type: string; createdAt: string; data: Record<string, unknown> }> = {
  'screenshot.completed': {
    id: 'evt_2mK8pQ4xW1vB8nR3sL6cZ7hT',
    type: 'screenshot.completed',
    createdAt: '2026-11-20T12:00:02.420Z',
    data: {
      screenshotId: 'scr_8cV1nQw3ZrT5yU7iO9pA2sD4',
      url: 'https://example.com',
      publicUrl: 'https://glimpse.example.com/files/Xq2vQd8Lr0tYb3nWc5mKz7hJf1pSg4aDe6uVi9oRl2x.png',
      format: 'png',
      width: 1280,
      height: 800,
    },
  },
  'screenshot.failed': {
    id: 'evt_5nR3sL6cZ7hT2mK8pQ4xW1vB',
    type: 'screenshot.failed',
    createdAt: '2026-11-20T12:00:31.007Z',
    data: { screenshotId: 'scr_8cV1nQw3ZrT5yU7iO9pA2sD4', url: 'https://example.com', error: 'net::ERR_NAME_NOT_RESOLVED' },
  },
  'run.completed': {
    id: 'evt_7hT2mK8pQ4xW1vB8nR3sL6cZ',
    type: 'run.completed',
    createdAt: '2026-11-20T12:05:00.000Z',
    data: {
      runId: 'run_3pQ8xW1vB8nR3sL6cZ7hT2mK',
      finalUrl: 'https://example.com/done',
      pageTitle: 'Example Domain',
      videoUrl: null,
      consoleErrorCount: 0,
      networkErrorCount: 1,
    },
  },
  'run.failed': {
    id: 'evt_8nR3sL6cZ7hT2mK8pQ4xW1vB',
    type: 'run.failed',
    createdAt: '2026-11-20T12:05:00.000Z',
    data: {
      runId: 'run_3pQ8xW1vB8nR3sL6cZ7hT2mK',
      finalUrl: 'https://example.com/done',
      pageTitle: 'Example Domain',
      videoUrl: null,
      consoleErrorCount: 2,
      networkErrorCount: 0,
      finalizationError: 'video upload failed',
    },
  },
  'quota.warning': {
    id: 'evt_1vB8nR3sL6cZ7hT2mK8pQ4xW',
    type: 'quota.warning',
    createdAt: '2026-11-20T12:00:00.000Z',
    data: { threshold: 0.8, used: 80, limit: 100, remaining: 20, resetAt: '2026-12-01T00:00:00.000Z', apiKeyId: 'key_9xW1vB8nR3sL6cZ7hT2mKpQ4' },
  },
  'test.ping': {
    id: 'evt_4xW1vB8nR3sL6cZ7hT2mK8pQ',
    type: 'test.ping',
    createdAt: '2026-11-20T12:00:00.000Z',
    data: { endpointId: 'we_4fQx9LmZ2pRt7YvB1nKc3sDw', message: 'Test event from Glimpse' },
  },
};
