import { applyDecorators, Type } from '@nestjs/common';
import { ApiHeader, ApiOkResponse } from '@nestjs/swagger';
import { AUTHENTICATED_RESPONSE_HEADERS, IDEMPOTENCY_REPLAYED_RESPONSE_HEADER } from '../common/operational-headers';
import { PREFER_WAIT_MAX_S } from './prefer-wait';

/**
 * Documents `Prefer: wait=N` on a work-creating route (CONTRACT.md, "Synchronous answers"): the request
 * header and the 200 with the ended object (`type`, e.g. `example`) and `Preference-Applied`. The route
 * answers through {@link PreferWait}.
 */
export function ApiPreferWait(type: Type<unknown>, example: unknown) {
  return applyDecorators(
    ApiHeader({
      name: 'Prefer',
      required: false,
      description:
        `\`wait=N\` (RFC 7240; N whole seconds 1–${PREFER_WAIT_MAX_S}): answer 200 with the ended object when it ends within N seconds, ` +
        'else 202 as without it. Any other value is ignored.',
      schema: { type: 'string', example: 'wait=30' },
    }),
    ApiOkResponse({
      type,
      description: 'With `Prefer: wait=N`: it ended within N seconds (a replay of such a request answers the same)',
      headers: {
        ...AUTHENTICATED_RESPONSE_HEADERS,
        ...IDEMPOTENCY_REPLAYED_RESPONSE_HEADER,
        'Preference-Applied': { description: 'The honoured preference, e.g. `wait=30`', schema: { type: 'string' } },
      },
      example,
    }),
  );
}
