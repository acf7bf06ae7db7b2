import { type Core, type RequestOptions, unwrap } from '../core';
import type { CreateProfileRequest, Profile, ProfilePage, UpdateProfileRequest } from '../types';

/**
 * `/v1/profiles…`: saved logged-in browser states (cookies and local storage, a Playwright
 * `storageState()` file as it is), bound to their `allowedDomains`, sealed and never returned.
 * Captures, monitors, render links and runs start with one (option `profile: "prf_…"`); a run records
 * one (`saveProfile`).
 */
export class Profiles {
  constructor(private readonly core: Core) {}

  /** `POST /v1/profiles`: cookies and origins outside `allowedDomains` are dropped. Throws `GlimpseError` 400 `VALIDATION_FAILED`, 403 `PLAN_LIMIT_REACHED`. */
  async create(body: CreateProfileRequest, options?: RequestOptions): Promise<Profile> {
    return unwrap(await this.core.api.POST('/v1/profiles', { body, ...this.core.init(options) }));
  }

  /** `GET /v1/profiles`: one page, newest first; pass `nextCursor` as `cursor` for the next. */
  async list(query: { limit?: number; cursor?: string } = {}, options?: RequestOptions): Promise<ProfilePage> {
    return unwrap(await this.core.api.GET('/v1/profiles', { params: { query }, ...this.core.init(options) }));
  }

  /** `GET /v1/profiles/{id}` (never the state). Throws `GlimpseError` 404 `NOT_FOUND`. */
  async get(id: string, options?: RequestOptions): Promise<Profile> {
    return unwrap(await this.core.api.GET('/v1/profiles/{id}', { params: { path: { id } }, ...this.core.init(options) }));
  }

  /** `PATCH /v1/profiles/{id}`: `name`, `allowedDomains`, or `storageState` (replaces the whole state). */
  async update(id: string, body: UpdateProfileRequest, options?: RequestOptions): Promise<Profile> {
    return unwrap(await this.core.api.PATCH('/v1/profiles/{id}', { params: { path: { id } }, body, ...this.core.init(options) }));
  }

  /** `DELETE /v1/profiles/{id}` (204), with its state. Throws `GlimpseError` 404 `NOT_FOUND`. */
  async delete(id: string, options?: RequestOptions): Promise<void> {
    unwrap(await this.core.api.DELETE('/v1/profiles/{id}', { params: { path: { id } }, ...this.core.init(options) }));
  }
}
