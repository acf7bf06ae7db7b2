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
  format: z
    .enum(JOB_FORMATS)
    .describe(
      'Result format (an image, pdf, or an animation mp4, webm or gif: a URL, never inline; none: only extracted content, see extracted).',
    ),
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

const nullableText = (description: string) => z.string().nullable().optional().describe(description);
const nullableUrl = (description: string) => z.string().nullable().optional().describe(`${description} Absolute URL.`);

/**
 * `structuredContent` of `read_page` (CONTRACT.md, "Extracted content"): once the capture is done, the
 * page's metadata (every field present, absent values null, URLs absolute); while it is still running
 * when the tool returns, only the job's `id` and `status` (call get_screenshot later). Every field is
 * optional so that both answers validate against the one schema MCP allows per tool.
 */
export const READ_PAGE_OUTPUT_SCHEMA = z.object({
  title: nullableText('The page title (<title>, else og:title, else twitter:title).'),
  description: nullableText('The meta description (else og:description, else twitter:description).'),
  lang: nullableText('The lang attribute of <html>, e.g. en.'),
  canonicalUrl: nullableUrl('The link rel=canonical.'),
  siteName: nullableText('og:site_name.'),
  image: nullableUrl('The preview image (og:image, else twitter:image).'),
  favicon: nullableUrl('The link rel=icon; null when the page declares none.'),
  openGraph: z.record(z.string(), z.string()).optional().describe("The page's og:* properties, prefix dropped (og:title → title)."),
  twitter: z.record(z.string(), z.string()).optional().describe("The page's twitter:* properties, prefix dropped (twitter:card → card)."),
  statusCode: z.number().int().nullable().optional().describe("HTTP status of the page's main document (null when unknown)."),
  finalUrl: nullableUrl('The page URL after redirects.'),
  id: z.string().optional().describe('Only while the capture is still running: the job id (scr_…) to pass to get_screenshot.'),
  status: z.enum(JOB_STATUSES).optional().describe('Only while the capture is still running: pending or processing.'),
});
export type ReadPageOutput = z.infer<typeof READ_PAGE_OUTPUT_SCHEMA>;
