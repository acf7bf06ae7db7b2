import { type Core, type RequestOptions, unwrap } from '../core';
import type { CreateStorageDestinationRequest, StorageDestination, StorageDestinationTest } from '../types';

/**
 * `/v1/storage-destinations…`: your own S3-compatible buckets that captures are uploaded to (capture
 * option `storage: { destinationId, path?, keepCopy? }`). Credentials are stored sealed and never returned.
 */
export class StorageDestinations {
  constructor(private readonly core: Core) {}

  /** `POST /v1/storage-destinations`: adds a bucket (not contacted: call {@link test}). Throws `GlimpseError` 403 `PLAN_LIMIT_REACHED`, 400 `TARGET_NOT_ALLOWED`. */
  async create(body: CreateStorageDestinationRequest, options?: RequestOptions): Promise<StorageDestination> {
    return unwrap(await this.core.api.POST('/v1/storage-destinations', { body, ...this.core.init(options) }));
  }

  /** `GET /v1/storage-destinations`: the account's destinations, oldest first. */
  async list(options?: RequestOptions): Promise<StorageDestination[]> {
    return unwrap(await this.core.api.GET('/v1/storage-destinations', { ...this.core.init(options) })).data;
  }

  /** `GET /v1/storage-destinations/{id}`. Throws `GlimpseError` 404 `NOT_FOUND`. */
  async get(id: string, options?: RequestOptions): Promise<StorageDestination> {
    return unwrap(await this.core.api.GET('/v1/storage-destinations/{id}', { params: { path: { id } }, ...this.core.init(options) }));
  }

  /** `POST /v1/storage-destinations/{id}/test`: writes and deletes a small object; `{ ok, error }` (200 either way). */
  async test(id: string, options?: RequestOptions): Promise<StorageDestinationTest> {
    return unwrap(await this.core.api.POST('/v1/storage-destinations/{id}/test', { params: { path: { id } }, ...this.core.init(options) }));
  }

  /** `DELETE /v1/storage-destinations/{id}` (204); objects already uploaded stay. Throws `GlimpseError` 404 `NOT_FOUND`. */
  async delete(id: string, options?: RequestOptions): Promise<void> {
    unwrap(await this.core.api.DELETE('/v1/storage-destinations/{id}', { params: { path: { id } }, ...this.core.init(options) }));
  }
}
