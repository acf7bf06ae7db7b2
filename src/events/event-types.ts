/**
 * Event types (spec section 6.1, plus CONTRACT.md "Webhooks": `endpoint.disabled`). `run.*` are
 * reserved for browser session runs. Each has an envelope schema in `src/webhooks/dto/webhook-events.dto.ts`
 * (WEBHOOK_EVENT_SCHEMAS), so it appears under the OpenAPI document's `webhooks`.
 */
export const EVENT_TYPES = [
  'screenshot.completed',
  'screenshot.failed',
  'run.completed',
  'run.failed',
  'quota.warning',
  'test.ping',
  'endpoint.disabled',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];
