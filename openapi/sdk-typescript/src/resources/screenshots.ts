import { type Core, type DownloadedFile, type RequestOptions, unwrap } from '../core';
import { GlimpseError } from '../errors';
import { pollUntil, type WaitOptions } from '../poll';
import type { CreateScreenshotRequest, ScreenshotJob, UploadScreenshotForm } from '../types';

/** A job that has ended: `done` (with its result `url`) or `failed` (with its `error`). */
export type FinishedScreenshotJob = ScreenshotJob & { status: 'done' | 'failed' };

/** A finished capture: the job and its result file. */
export interface CapturedScreenshot extends DownloadedFile {
  job: FinishedScreenshotJob & { status: 'done' };
}

/** Input of `screenshots.upload`: the HTML document (a `Blob`, bytes or a string) and any capture options. */
export type UploadScreenshotInput = Omit<UploadScreenshotForm, 'file'> & {
  file: Blob | Uint8Array | string;
  /** File name sent in the form (default `page.html`). */
  filename?: string;
};

/** Options of `capture`: the wait's options plus the create call's idempotency key. */
export type CaptureOptions = WaitOptions & Pick<RequestOptions, 'idempotencyKey'>;

/** `/v1/screenshot…`: capture jobs (README "Screenshots"). */
export class Screenshots {
  constructor(private readonly core: Core) {}

  /** `POST /v1/screenshot`: queues a capture and returns the `pending` job (202). Throws `GlimpseError` (400 `VALIDATION_FAILED`, 429 `PLAN_QUOTA_EXCEEDED`, …). */
  async create(body: CreateScreenshotRequest, options?: RequestOptions): Promise<ScreenshotJob> {
    return unwrap(await this.core.api.POST('/v1/screenshot', { body, ...this.core.init(options) }));
  }

  /** `POST /v1/screenshot/batch`: 1–100 captures, all accepted or none; the jobs in the order of `items`. */
  async batch(items: CreateScreenshotRequest[], options?: RequestOptions): Promise<ScreenshotJob[]> {
    return unwrap(await this.core.api.POST('/v1/screenshot/batch', { body: { items }, ...this.core.init(options) })).data;
  }

  /**
   * `POST /v1/screenshot/upload`: captures an HTML document you send (at most 10 MiB) instead of a URL.
   * Object and array options are sent as JSON text, as the route expects (docs/CONTRACT.md).
   */
  async upload(input: UploadScreenshotInput, options?: RequestOptions): Promise<ScreenshotJob> {
    const { file, filename = 'page.html', ...fields } = input;
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) {
      if (value !== undefined) form.append(name, typeof value === 'object' ? JSON.stringify(value) : String(value));
    }
    form.append(
      'file',
      typeof file === 'string' || file instanceof Uint8Array ? new Blob([file as BlobPart], { type: 'text/html' }) : file,
      filename,
    );
    return unwrap(
      await this.core.api.POST('/v1/screenshot/upload', {
        body: form as unknown as UploadScreenshotForm,
        bodySerializer: (body: unknown) => body as FormData,
        ...this.core.init(options),
      }),
    );
  }

  /** `GET /v1/screenshot/{id}`. Throws `GlimpseError` 404 `NOT_FOUND` for an unknown id or one of another account. */
  async get(id: string, options?: RequestOptions): Promise<ScreenshotJob> {
    return unwrap(await this.core.api.GET('/v1/screenshot/{id}', { params: { path: { id } }, ...this.core.init(options) }));
  }

  /**
   * Polls the job until it is `done` or `failed` and returns it (a failed capture is returned, not
   * thrown). Throws `GlimpseTimeoutError` after `timeoutMs` (default 120000).
   */
  async waitFor(id: string, options: WaitOptions = {}): Promise<FinishedScreenshotJob> {
    const job = await pollUntil(
      `screenshot ${id}`,
      (signal) => this.get(id, { signal }),
      (j) => j.status === 'done' || j.status === 'failed',
      {
        ...options,
        defaultTimeoutMs: 120_000,
      },
    );
    return job as FinishedScreenshotJob;
  }

  /** Downloads the result file of a `done` job (no API key is sent: the URL is the credential). Throws `TypeError` for a job not `done`. */
  async download(
    job: Pick<ScreenshotJob, 'id' | 'status' | 'url'>,
    options?: Omit<RequestOptions, 'idempotencyKey'>,
  ): Promise<DownloadedFile> {
    if (job.status !== 'done' || !job.url) throw new TypeError(`screenshot ${job.id} is ${job.status}, not done`);
    return this.core.download(job.url, options);
  }

  /**
   * Create, wait, download: the bytes and content type of a capture. Throws `GlimpseError` `JOB_FAILED`
   * (with the job's `error` as message and `details.job`) when the capture failed.
   */
  async capture(body: CreateScreenshotRequest, options: CaptureOptions = {}): Promise<CapturedScreenshot> {
    const { idempotencyKey, ...wait } = options;
    const created = await this.create(body, { signal: options.signal, idempotencyKey });
    const job = await this.waitFor(created.id, wait);
    if (job.status === 'failed') {
      throw new GlimpseError({
        message: `capture ${job.id} failed: ${job.error ?? 'unknown error'}`,
        status: 0,
        code: 'JOB_FAILED',
        details: { job },
      });
    }
    const file = await this.download(job, { signal: options.signal });
    return { job: job as CapturedScreenshot['job'], ...file };
  }
}
