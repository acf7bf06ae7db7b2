import { type Core, type RequestOptions, unwrap } from '../core';
import type { CreatedRenderKey, CreateRenderKeyRequest, RenderKey, RotatedRenderKey, RotateRenderKeyRequest } from '../types';

/** `/v1/render-keys…`: the keys that sign render links (sign them with `signRenderUrl`, on a server only). */
export class RenderKeys {
  constructor(private readonly core: Core) {}

  /** `POST /v1/render-keys`: a key bound to this API key; its `secret` is in this answer only. Throws `GlimpseError` 403 `PLAN_LIMIT_REACHED`. */
  async create(body: CreateRenderKeyRequest = {}, options?: RequestOptions): Promise<CreatedRenderKey> {
    return unwrap(await this.core.api.POST('/v1/render-keys', { body, ...this.core.init(options) }));
  }

  /** `GET /v1/render-keys`: the account's render keys, oldest first (without secrets). */
  async list(options?: RequestOptions): Promise<RenderKey[]> {
    return unwrap(await this.core.api.GET('/v1/render-keys', { ...this.core.init(options) })).data;
  }

  /** `POST /v1/render-keys/{id}/rotate`: a new secret; links signed with the old one work for `expiresInSeconds` (default 0). */
  async rotate(id: string, body: RotateRenderKeyRequest = {}, options?: RequestOptions): Promise<RotatedRenderKey> {
    return unwrap(await this.core.api.POST('/v1/render-keys/{id}/rotate', { params: { path: { id } }, body, ...this.core.init(options) }));
  }

  /** `DELETE /v1/render-keys/{id}` (204): its links fail at once. Throws `GlimpseError` 404 `NOT_FOUND`. */
  async delete(id: string, options?: RequestOptions): Promise<void> {
    unwrap(await this.core.api.DELETE('/v1/render-keys/{id}', { params: { path: { id } }, ...this.core.init(options) }));
  }
}
