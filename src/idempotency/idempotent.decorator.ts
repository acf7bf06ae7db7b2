import { applyDecorators, SetMetadata, UseInterceptors } from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';
import { IDEMPOTENCY_KEY_PATTERN, IDEMPOTENT_OPTIONS, IdempotencyInterceptor, IdempotentOptions } from './idempotency.interceptor';

/**
 * Makes a route accept `Idempotency-Key` (see {@link IdempotencyInterceptor}) and documents the header
 * (the document builder adds its 400/409/422 codes to the route's own, `src/openapi/operational-headers.ts`). Declare `Idempotency-Replayed` on the route's success response
 * (`IDEMPOTENCY_REPLAYED_RESPONSE_HEADER`). On an upload route, put the upload interceptor below
 * this decorator, so the file is parsed before the request is fingerprinted:
 *
 * ```ts
 * @Idempotent()
 * @UseInterceptors(FileInterceptor('file'))
 * ```
 */
export function Idempotent(options: IdempotentOptions = {}) {
  return applyDecorators(
    SetMetadata(IDEMPOTENT_OPTIONS, options),
    UseInterceptors(IdempotencyInterceptor),
    ApiHeader({
      name: 'Idempotency-Key',
      required: false,
      description:
        'Makes retries safe: the first 2xx response is stored for 24 hours and replayed (with `Idempotency-Replayed: true`) ' +
        'for a retry with the same key and body; a concurrent retry gets 409, another body 422. Scope: API key, method and path.',
      schema: { type: 'string', pattern: IDEMPOTENCY_KEY_PATTERN.source },
    }),
  );
}
