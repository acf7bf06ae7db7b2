import { z } from 'zod';
import { PLANS } from '../accounts/plan';
import { JOB_FORMATS } from '../results/result-formats';
import { JOB_STATUSES } from '../screenshots/screenshot-job.entity';

/** `structuredContent` of `take_screenshot` and `get_screenshot`: the job in brief. */
export const SCREENSHOT_OUTPUT_SCHEMA = z.object({
  id: z.string().describe('Job id (scr_…); pass it to get_screenshot.'),
  status: z.enum(JOB_STATUSES).describe('pending → processing → done | failed'),
  url: z
    .string()
    .nullable()
    .describe('Public URL of the image (no API key needed, expires after the retention period); null until status is done.'),
  format: z.enum(JOB_FORMATS).describe('Result format (an image, or pdf; none: only extracted content, see extracted).'),
  width: z.number().int().describe('Viewport width in px.'),
  height: z.number().int().describe('Viewport height in px.'),
});
export type ScreenshotOutput = z.infer<typeof SCREENSHOT_OUTPUT_SCHEMA>;

/** `structuredContent` of `get_quota`. */
export const QUOTA_OUTPUT_SCHEMA = z.object({
  plan: z.enum(PLANS).describe('Plan of the account that owns this API key.'),
  limit: z.number().int().describe('Screenshots allowed per calendar month (UTC) for this API key.'),
  used: z.number().int().describe('Screenshots counted this month.'),
  remaining: z.number().int().describe('limit minus used, not below 0.'),
  resetAt: z.string().describe('When the count resets: the 1st of next month, 00:00 UTC (ISO 8601).'),
});
export type QuotaOutput = z.infer<typeof QUOTA_OUTPUT_SCHEMA>;
