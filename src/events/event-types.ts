/** Event types (spec section 6.1). `run.*` are reserved for browser session runs. */
export const EVENT_TYPES = [
  'screenshot.completed',
  'screenshot.failed',
  'run.completed',
  'run.failed',
  'quota.warning',
  'test.ping',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];
