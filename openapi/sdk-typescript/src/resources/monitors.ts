import { type Core, type RequestOptions, unwrap } from '../core';
import type { CreateMonitorRequest, Monitor, MonitorCheckPage, MonitorPage, UpdateMonitorRequest } from '../types';

/** `/v1/monitors…`: pages captured on a schedule and compared with the previous image (events `monitor.changed`, `monitor.failed`). */
export class Monitors {
  constructor(private readonly core: Core) {}

  /** `POST /v1/monitors`: its first check is due at once. Throws `GlimpseError` 400 `VALIDATION_FAILED`, 403 `PLAN_LIMIT_REACHED`. */
  async create(body: CreateMonitorRequest, options?: RequestOptions): Promise<Monitor> {
    return unwrap(await this.core.api.POST('/v1/monitors', { body, ...this.core.init(options) }));
  }

  /** `GET /v1/monitors`: one page, newest first; pass `nextCursor` as `cursor` for the next. */
  async list(query: { limit?: number; cursor?: string } = {}, options?: RequestOptions): Promise<MonitorPage> {
    return unwrap(await this.core.api.GET('/v1/monitors', { params: { query }, ...this.core.init(options) }));
  }

  /** `GET /v1/monitors/{id}`. */
  async get(id: string, options?: RequestOptions): Promise<Monitor> {
    return unwrap(await this.core.api.GET('/v1/monitors/{id}', { params: { path: { id } }, ...this.core.init(options) }));
  }

  /** `PATCH /v1/monitors/{id}`: any field of the create body; `enabled: false` pauses, `true` resumes. */
  async update(id: string, body: UpdateMonitorRequest, options?: RequestOptions): Promise<Monitor> {
    return unwrap(await this.core.api.PATCH('/v1/monitors/{id}', { params: { path: { id } }, body, ...this.core.init(options) }));
  }

  /** `DELETE /v1/monitors/{id}` (204), with its checks. */
  async delete(id: string, options?: RequestOptions): Promise<void> {
    unwrap(await this.core.api.DELETE('/v1/monitors/{id}', { params: { path: { id } }, ...this.core.init(options) }));
  }

  /** `POST /v1/monitors/{id}/check`: a check now, outside the schedule (counts one screenshot); returns its id. */
  async check(id: string, options?: RequestOptions): Promise<{ checkId: string }> {
    return unwrap(await this.core.api.POST('/v1/monitors/{id}/check', { params: { path: { id } }, ...this.core.init(options) }));
  }

  /** `POST /v1/monitors/{id}/baseline`: later checks are compared with this check's image. */
  async pinBaseline(id: string, checkId: string, options?: RequestOptions): Promise<Monitor> {
    return unwrap(
      await this.core.api.POST('/v1/monitors/{id}/baseline', { params: { path: { id } }, body: { checkId }, ...this.core.init(options) }),
    );
  }

  /** `GET /v1/monitors/{id}/checks`: one page of checks, newest first. */
  async checks(id: string, query: { limit?: number; cursor?: string } = {}, options?: RequestOptions): Promise<MonitorCheckPage> {
    return unwrap(await this.core.api.GET('/v1/monitors/{id}/checks', { params: { path: { id }, query }, ...this.core.init(options) }));
  }
}
