/**
 * `@glimpse/sdk`: the Glimpse API client. Types are generated from the OpenAPI document
 * (`openapi/openapi.json`); this entry uses only `fetch`, `URL`, `AbortSignal` and `crypto.randomUUID`, so
 * it runs in Node ≥ 20, browsers, Deno and edge runtimes. Webhook verification: `@glimpse/sdk/webhooks`.
 */
export { Glimpse } from './client';
export type { DownloadedFile, GlimpseOptions, RequestOptions } from './core';
export { GlimpseConnectionError, GlimpseError, GlimpseTimeoutError } from './errors';
export type { GlimpseApiErrorCode, GlimpseClientErrorCode, GlimpseErrorCode } from './errors';
export type { FetchLike } from './http';
export { signRenderUrl } from './render-links';
export type { RenderLinkFormat, RenderLinkOptionValue, SignRenderUrlInput } from './render-links';
export type { WaitOptions } from './poll';
export type { FinishedRun } from './resources/runs';
export type { FinishedCrawl } from './resources/crawls';
export type { CapturedScreenshot, CaptureOptions, FinishedScreenshotJob, UploadScreenshotInput } from './resources/screenshots';
export type { components, operations, paths, webhooks } from './generated/schema';
export type * from './types';
