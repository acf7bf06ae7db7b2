import { type Core, type RequestOptions, unwrap } from '../core';
import { pollUntil, type WaitOptions } from '../poll';
import type { CreateRunRequest, ListRunsParams, Run, RunPage } from '../types';

/** A run that has ended: `completed`, or `failed` (with `failure` and `finalizationError`). */
export type FinishedRun = Run & { status: 'completed' | 'failed' };

/** `/v1/runs…`: browser session runs (README "Browser session runs"). */
export class Runs {
  constructor(private readonly core: Core) {}

  /** `POST /v1/runs`: starts a run (202, `pending`). Counts one screenshot against the quota. */
  async create(body: CreateRunRequest, options?: RequestOptions): Promise<Run> {
    return unwrap(await this.core.api.POST('/v1/runs', { body, ...this.core.init(options) }));
  }

  /** `GET /v1/runs/{id}`. Throws `GlimpseError` 404 `NOT_FOUND`. */
  async get(id: string, options?: RequestOptions): Promise<Run> {
    return unwrap(await this.core.api.GET('/v1/runs/{id}', { params: { path: { id } }, ...this.core.init(options) }));
  }

  /** `POST /v1/runs/{id}/cancel`: ends a `pending` or `running` run as `failed`. Throws `GlimpseError` 409 `RUN_ALREADY_ENDED`. */
  async cancel(id: string, options?: RequestOptions): Promise<Run> {
    return unwrap(await this.core.api.POST('/v1/runs/{id}/cancel', { params: { path: { id } }, ...this.core.init(options) }));
  }

  /** `GET /v1/runs`: one page, newest first; pass the previous page's `nextCursor` as `cursor`. */
  async listPage(params: ListRunsParams & { cursor?: string } = {}, options?: RequestOptions): Promise<RunPage> {
    return unwrap(await this.core.api.GET('/v1/runs', { params: { query: params }, ...this.core.init(options) }));
  }

  /**
   * Every run of the account, newest first, fetching page after page (`limit` runs each, default 20)
   * as you iterate: `for await (const run of glimpse.runs.list({ status: 'failed' })) …`.
   */
  async *list(params: ListRunsParams = {}, options?: RequestOptions): AsyncGenerator<Run, void, undefined> {
    let cursor: string | undefined;
    do {
      const page = await this.listPage({ ...params, ...(cursor && { cursor }) }, options);
      yield* page.data;
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
  }

  /**
   * Polls the run until it is `completed` or `failed` and returns it (a failed run is returned, not
   * thrown). Throws `GlimpseTimeoutError` after `timeoutMs` (default 330000: a run may last 300 s).
   */
  async waitFor(id: string, options: WaitOptions = {}): Promise<FinishedRun> {
    const run = await pollUntil(
      `run ${id}`,
      (signal) => this.get(id, { signal }),
      (r) => r.status === 'completed' || r.status === 'failed',
      {
        intervalMs: 500,
        ...options,
        defaultTimeoutMs: 330_000,
      },
    );
    return run as FinishedRun;
  }
}
