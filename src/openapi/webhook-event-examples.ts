/*
 * Example bodies of the webhook events for the OpenAPI document; the event schemas themselves are the
 * webhooks module's DTOs (src/webhooks/dto/webhook-events.dto.ts, WEBHOOK_EVENT_SCHEMAS).
 */

import type { EventType } from '../events/event-types';
import { artifactExamples } from '../results/artifacts';
import type { EventEnvelope } from '../events/events.service';
import { COMPLETED_CRAWL_EXAMPLE } from '../crawls/crawls.controller';
import { CHANGE_EXAMPLE, CHECK_EXAMPLE, MONITOR_EXAMPLE } from '../monitors/monitors.controller';

/** One example envelope per event type, for the document's webhook request bodies; typed by the event map. */
export const WEBHOOK_EVENT_EXAMPLES: { readonly [K in EventType]: EventEnvelope<K> } = {
  'screenshot.completed': {
    id: 'evt_2mK8pQ4xW1vB8nR3sL6cZ7hT',
    type: 'screenshot.completed',
    createdAt: '2026-11-20T12:00:02.420Z',
    data: {
      screenshotId: 'scr_8cV1nQw3ZrT5yU7iO9pA2sD4',
      url: 'https://example.com',
      ...artifactExamples().event,
      format: 'png',
      width: 1280,
      height: 800,
      fullPage: false,
      clipped: false,
      targetStatus: 200,
    },
  },
  'screenshot.failed': {
    id: 'evt_5nR3sL6cZ7hT2mK8pQ4xW1vB',
    type: 'screenshot.failed',
    createdAt: '2026-11-20T12:00:31.007Z',
    data: {
      screenshotId: 'scr_8cV1nQw3ZrT5yU7iO9pA2sD4',
      url: 'https://example.com',
      error: 'net::ERR_NAME_NOT_RESOLVED',
      targetStatus: null,
    },
  },
  'run.completed': {
    id: 'evt_7hT2mK8pQ4xW1vB8nR3sL6cZ',
    type: 'run.completed',
    createdAt: '2026-11-20T12:05:00.000Z',
    data: {
      runId: 'run_3pQ8xW1vB8nR3sL6cZ7hT2mK',
      status: 'completed',
      finalUrl: 'https://example.com/done',
      pageTitle: 'Example Domain',
      videoUrl: 'https://glimpse.example.com/files/Vd3kQ8pW1xB8nR3sL6cZ7hT2mKq4Yt9Lr0bN5jF2uAe6.webm',
      consoleErrorCount: 0,
      networkErrorCount: 1,
      stepCount: 4,
      durationMs: 6120,
    },
  },
  'run.failed': {
    id: 'evt_8nR3sL6cZ7hT2mK8pQ4xW1vB',
    type: 'run.failed',
    createdAt: '2026-11-20T12:05:00.000Z',
    data: {
      runId: 'run_3pQ8xW1vB8nR3sL6cZ7hT2mK',
      status: 'failed',
      finalUrl: 'https://example.com/cart',
      pageTitle: 'Cart',
      videoUrl: 'https://glimpse.example.com/files/Vd3kQ8pW1xB8nR3sL6cZ7hT2mKq4Yt9Lr0bN5jF2uAe6.webm',
      consoleErrorCount: 2,
      networkErrorCount: 0,
      stepCount: 5,
      durationMs: 10480,
      finalizationError: 'step 3 (click "#buy"): selector not visible within 10000 ms',
    },
  },
  'quota.warning': {
    id: 'evt_1vB8nR3sL6cZ7hT2mK8pQ4xW',
    type: 'quota.warning',
    createdAt: '2026-11-20T12:00:00.000Z',
    data: {
      threshold: 0.8,
      used: 80,
      limit: 100,
      remaining: 20,
      resetAt: '2026-12-01T00:00:00.000Z',
      apiKeyId: 'key_9xW1vB8nR3sL6cZ7hT2mKpQ4',
    },
  },
  'test.ping': {
    id: 'evt_4xW1vB8nR3sL6cZ7hT2mK8pQ',
    type: 'test.ping',
    createdAt: '2026-11-20T12:00:00.000Z',
    data: { endpointId: 'we_4fQx9LmZ2pRt7YvB1nKc3sDw', message: 'Test event from Glimpse' },
  },
  'endpoint.disabled': {
    id: 'evt_6cZ7hT2mK8pQ4xW1vB8nR3sL',
    type: 'endpoint.disabled',
    createdAt: '2026-11-25T12:00:00.000Z',
    data: {
      endpointId: 'we_4fQx9LmZ2pRt7YvB1nKc3sDw',
      url: 'https://example.com/hooks/glimpse',
      reason: 'failing',
      disabledAt: '2026-11-25T12:00:00.000Z',
    },
  },
  'monitor.changed': {
    id: 'evt_7hT2mK8pQ4xW1vB8nR3sL6cZ',
    type: 'monitor.changed',
    createdAt: '2026-11-25T12:00:00.000Z',
    data: {
      monitorId: MONITOR_EXAMPLE.id,
      checkId: CHECK_EXAMPLE.id,
      url: MONITOR_EXAMPLE.url,
      ...CHANGE_EXAMPLE,
    },
  },
  'monitor.failed': {
    id: 'evt_8pQ4xW1vB8nR3sL6cZ7hT2mK',
    type: 'monitor.failed',
    createdAt: '2026-11-25T12:00:00.000Z',
    data: {
      monitorId: 'mon_4fQx9LmZ2pRt7YvB1nKc3sDw',
      checkId: 'chk_8cV1nQw3ZrT5yU7iO9pA2sD4',
      url: 'https://example.com/pricing',
      error: 'navigation timed out after 30000 ms',
      consecutiveFailures: 5,
      paused: true,
    },
  },
  'crawl.completed': {
    id: 'evt_9vB8nR3sL6cZ7hT2mK8pQ4xW',
    type: 'crawl.completed',
    createdAt: '2026-11-25T12:00:00.000Z',
    data: {
      crawlId: COMPLETED_CRAWL_EXAMPLE.id,
      url: COMPLETED_CRAWL_EXAMPLE.url,
      status: 'completed',
      pagesFound: COMPLETED_CRAWL_EXAMPLE.pagesFound,
      pagesQueued: COMPLETED_CRAWL_EXAMPLE.pagesQueued,
      pagesDone: COMPLETED_CRAWL_EXAMPLE.pagesDone,
      pagesFailed: COMPLETED_CRAWL_EXAMPLE.pagesFailed,
      stoppedReason: COMPLETED_CRAWL_EXAMPLE.stoppedReason,
      bundleUrl: COMPLETED_CRAWL_EXAMPLE.bundleUrl,
      error: COMPLETED_CRAWL_EXAMPLE.error,
    },
  },
  'crawl.failed': {
    id: 'evt_1vB8nR3sL6cZ7hT2mK8pQ4xW',
    type: 'crawl.failed',
    createdAt: '2026-11-25T12:00:00.000Z',
    data: {
      crawlId: 'crl_3fJ9kLmN2pQr5sTu7vWx9yZa',
      url: 'https://example.com/',
      status: 'failed',
      pagesFound: 1,
      pagesQueued: 1,
      pagesDone: 0,
      pagesFailed: 1,
      stoppedReason: 'exhausted',
      bundleUrl: 'https://glimpse.example.com/files/Jd0aZxY2mNw8PqRs4kq1Jd0aZxY2mNw8PqRs4kq1Jd0.zip',
      error: 'the start URL could not be read: net::ERR_CONNECTION_REFUSED',
    },
  },
  'profile.expired': {
    id: 'evt_9qR5yX2wC9oS4tM7dA8iU3nL',
    type: 'profile.expired',
    createdAt: '2026-11-25T12:00:00.000Z',
    data: {
      profileId: 'prf_4fQx9LmZ2pRt7YvB1nKc3sDw',
      name: 'Staging admin',
      screenshotId: 'scr_8cV1nQw3ZrT5yU7iO9pA2sD4',
      url: 'https://app.example.com/dashboard',
      selector: '#account-menu',
    },
  },
};
