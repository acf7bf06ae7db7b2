import type { components, webhooks } from './generated/schema';

/** A screenshot job as returned by `createScreenshot` and `getScreenshot`. */
export type ScreenshotJob = components['schemas']['ScreenshotJobDto'];
/** Body of `createScreenshot` (only `url` is required). */
export type CreateScreenshotRequest = components['schemas']['CreateScreenshotDto'];
/** Body of `createScreenshotBatch`: 1–100 `CreateScreenshotRequest` items. */
export type CreateScreenshotBatchRequest = components['schemas']['CreateScreenshotBatchDto'];
/** A browser session run as returned by `createRun`, `getRun`, `listRuns` and `cancelRun`. */
export type Run = components['schemas']['RunDto'];
/** Body of `createRun`: `url`, `steps` (discriminated on `action`), `video`, `timeoutMs` and the session options. */
export type CreateRunRequest = components['schemas']['CreateRunDto'];
/** The error envelope of every error response; each operation narrows `code` to the codes it can return. */
export type ErrorEnvelope = components['schemas']['ErrorEnvelopeDto'];
/**
 * Any webhook event body as the document defines it, discriminated by `type` (`verifyWebhook` returns
 * the same shapes as `WebhookEvent`). Ignore types you do not know.
 */
export type WebhookEventPayload = {
  [K in keyof webhooks]: webhooks[K]['post'] extends { requestBody: { content: { 'application/json': infer B } } } ? B : never;
}[keyof webhooks];
/** Event types the document lists. */
export type WebhookEventType = WebhookEventPayload['type'];
