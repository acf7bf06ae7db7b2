/**
 * Glimpse TypeScript SDK: the client and types generated from `openapi/openapi.json`, helpers to wait
 * for a job (or a browser session run) and download its file, and the receiver-side webhook signature verifier.
 */
export { createGlimpseClient } from './client';
export type { GlimpseClient, GlimpseClientOptions } from './client';
export { downloadScreenshot } from './download';
export type { DownloadedScreenshot } from './download';
export { GlimpseApiError, GlimpseTimeoutError } from './errors';
export type { components, operations, paths, webhooks } from './generated/schema';
export type { CreateRunRequest, CreateScreenshotBatchRequest, CreateScreenshotRequest, ErrorEnvelope, Run, ScreenshotJob, WebhookEventPayload, WebhookEventType } from './types';
export { waitForRun } from './wait-for-run';
export type { FinishedRun, WaitForRunOptions } from './wait-for-run';
export { retryAfterMs, waitForScreenshot, waitForScreenshots } from './wait-for-screenshot';
export type { FinishedScreenshotJob, WaitForScreenshotOptions } from './wait-for-screenshot';
export { DEFAULT_TOLERANCE_S, verifyWebhook, WebhookVerificationError } from './webhook-verifier';
export type { WebhookEvent, WebhookHeaders, WebhookVerificationErrorCode } from './webhook-verifier';
