import type { ArtifactEventFields } from '../results/artifacts';
import type { JobFormat } from '../results/result-formats';

/**
 * Event types (spec section 6.1, plus CONTRACT.md "Webhooks": `endpoint.disabled`, "Monitors" and "Browser
 * profiles": `profile.expired`). Each has an
 * envelope schema derived from its data class in `src/webhooks/dto/webhook-events.dto.ts`, so it appears under the OpenAPI
 * document's `webhooks`.
 */
export const EVENT_TYPES = [
  'screenshot.completed',
  'screenshot.failed',
  'run.completed',
  'run.failed',
  'quota.warning',
  'test.ping',
  'endpoint.disabled',
  'monitor.changed',
  'monitor.failed',
  'crawl.completed',
  'crawl.failed',
  'profile.expired',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/**
 * `data` of `screenshot.completed` (spec section 6.1): the job's artifacts as the artifacts table shows
 * them (src/results/artifacts.ts: `publicUrl`, the result's capability URL, null with `format: "none"`;
 * the thumbnail's URL; `extracted`, URLs, sizes and metadata, not the contents), and the fields below.
 */
export interface ScreenshotCompletedData extends ArtifactEventFields {
  screenshotId: string;
  /** The captured page URL (`upload:<sha256>` for an uploaded document). */
  url: string;
  format: JobFormat;
  /** Viewport width, CSS px. */
  width: number;
  /** Viewport height, CSS px. */
  height: number;
  fullPage: boolean;
  /** True when a full-page capture was cut at the height cap. */
  clipped: boolean;
  /** HTTP status of the page's main document; null for an uploaded document. */
  targetStatus: number | null;
}

/** `data` of `screenshot.failed` (spec section 6.1). */
export interface ScreenshotFailedData {
  screenshotId: string;
  url: string;
  /** Customer-safe failure description, as the job's `error`. */
  error: string;
  /** HTTP status of the page's main document when it answered before the failure, else null. */
  targetStatus: number | null;
}

/** `data` of `run.completed` (spec section 6.1, CONTRACT.md "Browser session runs"). */
export interface RunCompletedData {
  runId: string;
  status: 'completed';
  finalUrl: string;
  pageTitle: string;
  videoUrl: string | null;
  consoleErrorCount: number;
  networkErrorCount: number;
  stepCount: number;
  /** From start to end of the run, ms. */
  durationMs: number;
}

/** `data` of `run.failed` (spec section 6.1, CONTRACT.md "Browser session runs"). */
export interface RunFailedData extends Omit<RunCompletedData, 'status' | 'finalUrl' | 'pageTitle'> {
  status: 'failed';
  /** Null when the run failed before a page loaded. */
  finalUrl: string | null;
  pageTitle: string | null;
  /** Customer-safe: which step, the budget, the browser or the finalization failed. */
  finalizationError: string;
}

/** `data` of `quota.warning` (spec section 8, CONTRACT.md "Quotas"). */
export interface QuotaWarningData {
  /** Share of the cap reached: 0.8 or 0.95. */
  threshold: number;
  used: number;
  limit: number;
  remaining: number;
  /** ISO 8601. */
  resetAt: string;
  apiKeyId: string;
}

/** `data` of `test.ping`. */
export interface TestPingData {
  endpointId: string;
  message: string;
}

/** `data` of `endpoint.disabled` (CONTRACT.md "Webhooks", auto-disable). */
export interface EndpointDisabledData {
  /** The disabled endpoint (never the one receiving the event). */
  endpointId: string;
  url: string;
  reason: 'failing';
  /** ISO 8601. */
  disabledAt: string;
}

/** A rectangle of an image, px from its top-left corner. */
export interface ImageRegion {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** `data` of `monitor.changed` (CONTRACT.md, "Monitors"). */
export interface MonitorChangedData {
  monitorId: string;
  checkId: string;
  /** The monitored page URL. */
  url: string;
  /** Changed pixels over all pixels, 0–1 (1 when the image size changed). */
  diffRatio: number;
  diffPixels: number;
  /** Bounding boxes of the changed areas (at most 20). */
  regions: ImageRegion[];
  screenshotUrl: string | null;
  baselineUrl: string | null;
  diffUrl: string | null;
}

/** `data` of `monitor.failed` (CONTRACT.md, "Monitors"). */
export interface MonitorFailedData {
  monitorId: string;
  checkId: string;
  url: string;
  /** Customer-safe failure description. */
  error: string;
  /** Failed checks in a row, this one included. */
  consecutiveFailures: number;
  /** Whether this failure paused the monitor (`pausedReason: "failing"`). */
  paused: boolean;
}

/** `data` of `crawl.completed` and `crawl.failed` (CONTRACT.md, "Crawls"). */
export interface CrawlEndedData {
  crawlId: string;
  /** The start URL. */
  url: string;
  status: 'completed' | 'failed';
  pagesFound: number;
  pagesQueued: number;
  pagesDone: number;
  pagesFailed: number;
  /** Why the crawl stopped creating jobs: `maxPages`, `exhausted`, `canceled` or `quota`. */
  stoppedReason: string | null;
  /** Capability URL of the ZIP of every result file and `manifest.json`; null when it could not be stored. */
  bundleUrl: string | null;
  /** Customer-safe reason of a failed crawl; null when completed. */
  error: string | null;
}

/**
 * `data` of `profile.expired` (CONTRACT.md, "Browser profiles"): a capture with `profileCheck` did not
 * find its selector, so the profile's login has probably ended. Sent once per profile until its state
 * or allowed domains change.
 */
export interface ProfileExpiredData {
  profileId: string;
  /** The profile's name. */
  name: string;
  /** The capture job that found it expired (a monitor's check is one). */
  screenshotId: string;
  /** The captured page URL. */
  url: string;
  /** The `profileCheck` selector that was not found. */
  selector: string;
}

/**
 * The data shape of every event type. `EventsService.publish` takes `EventDataMap[type]`, and the
 * OpenAPI `webhooks` section documents each type with a class that implements the same shape
 * (src/webhooks/dto/webhook-events.dto.ts), so a field cannot be sent without being documented.
 */
export interface EventDataMap {
  'screenshot.completed': ScreenshotCompletedData;
  'screenshot.failed': ScreenshotFailedData;
  'run.completed': RunCompletedData;
  'run.failed': RunFailedData;
  'quota.warning': QuotaWarningData;
  'test.ping': TestPingData;
  'endpoint.disabled': EndpointDisabledData;
  'monitor.changed': MonitorChangedData;
  'monitor.failed': MonitorFailedData;
  'crawl.completed': CrawlEndedData;
  'crawl.failed': CrawlEndedData;
  'profile.expired': ProfileExpiredData;
}
