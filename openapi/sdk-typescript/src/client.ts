import { Core, type DownloadedFile, type GlimpseOptions, type RequestOptions } from './core';
import { Crawls } from './resources/crawls';
import { Monitors } from './resources/monitors';
import { Profiles } from './resources/profiles';
import { Runs } from './resources/runs';
import { Screenshots } from './resources/screenshots';
import { RenderKeys } from './resources/render-keys';
import { StorageDestinations } from './resources/storage-destinations';
import { Webhooks } from './resources/webhooks';

/**
 * The Glimpse API client:
 *
 * ```ts
 * const glimpse = new Glimpse({ apiKey: process.env.GLIMPSE_API_KEY!, baseUrl: 'https://glimpse.example.com' });
 * const { data, contentType } = await glimpse.screenshots.capture({ url: 'https://example.com' });
 * ```
 *
 * Every method returns the answer's data or throws a `GlimpseError` (typed by `code`). Calls are
 * retried on network errors, 5xx and retryable 429s, with one `Idempotency-Key` per POST/PATCH call.
 * Throws `TypeError` when `apiKey` or `baseUrl` is empty.
 */
export class Glimpse {
  readonly screenshots: Screenshots;
  readonly runs: Runs;
  readonly webhooks: Webhooks;
  readonly renderKeys: RenderKeys;
  readonly monitors: Monitors;
  readonly storageDestinations: StorageDestinations;
  readonly crawls: Crawls;
  readonly profiles: Profiles;
  /** The generated openapi-fetch client on the same transport, for anything the resources do not wrap. */
  readonly api: Core['api'];
  private readonly core: Core;

  constructor(options: GlimpseOptions) {
    this.core = new Core(options);
    this.api = this.core.api;
    this.screenshots = new Screenshots(this.core);
    this.runs = new Runs(this.core);
    this.webhooks = new Webhooks(this.core);
    this.renderKeys = new RenderKeys(this.core);
    this.monitors = new Monitors(this.core);
    this.storageDestinations = new StorageDestinations(this.core);
    this.crawls = new Crawls(this.core);
    this.profiles = new Profiles(this.core);
  }

  /** Downloads any capability URL the API returned (a result `url`, a run's `videoUrl`, a step's `screenshotUrl`); no API key is sent. */
  download(url: string, options?: Omit<RequestOptions, 'idempotencyKey'>): Promise<DownloadedFile> {
    return this.core.download(url, options);
  }
}
