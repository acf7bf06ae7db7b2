import type { ScreenshotJob } from './types';

export interface DownloadedScreenshot {
  /** The image bytes. */
  data: Uint8Array;
  /** `image/png`, `image/jpeg` or `image/webp`. */
  contentType: string;
}

/**
 * Downloads the result file of a `done` job from its capability URL (no API key is sent: the URL is
 * the credential). Throws a `TypeError` for a job that is not `done`, and an `Error` with the HTTP
 * status when the file is gone (404 after the retention period).
 */
export async function downloadScreenshot(
  job: Pick<ScreenshotJob, 'id' | 'status' | 'url'>,
  options: { fetch?: (input: Request) => Promise<Response> } = {},
): Promise<DownloadedScreenshot> {
  if (job.status !== 'done' || !job.url) throw new TypeError(`screenshot ${job.id} is ${job.status}, not done`);
  const res = await (options.fetch ?? fetch)(new Request(job.url));
  if (!res.ok) throw new Error(`downloading ${job.id} failed: HTTP ${res.status}`);
  return { data: new Uint8Array(await res.arrayBuffer()), contentType: res.headers.get('content-type') ?? 'application/octet-stream' };
}
