import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { AuthenticatedKey } from '../auth/api-keys.service';
import { ApiKeyAuth, CurrentApiKey } from '../auth/current-api-key.decorator';
import { ApiErrorResponses } from '../common/api-error-responses.decorator';
import { ApiDeleteRoute, ApiListRoute, ApiPlanLimitedCreateErrors, CHANGE_ERRORS } from '../common/api-resource-routes.decorator';
import { Idempotent } from '../idempotency/idempotent.decorator';
import { CreatedRenderKeyDto, CreateRenderKeyDto, RenderKeyListDto, RotatedRenderKeyDto, RotateRenderKeyDto } from './dto/render-key.dto';
import { RenderKeysService } from './render-keys.service';

const KEY_EXAMPLE = {
  id: 'rk_4fQx9LmZ2pRt7YvB1nKc3sDw',
  apiKeyId: 'key_8cV1nQw3ZrT5yU7iO9pA2sD4',
  description: 'Open Graph images',
  allowedHosts: ['example.com', '*.example.com'],
  createdAt: '2026-11-20T12:00:00.000Z',
};
const SECRET_EXAMPLE = 'rks_Jd0aZxY2mNw8PqRs4kq1Jd0aZxY2mNw8PqRs4kq1';
const KEY_ID = ApiParam({ name: 'id', description: 'Render key id (`rk_…`)', example: KEY_EXAMPLE.id });

/** Render keys: the keys that sign render links (CONTRACT.md, "Render links"). */
@ApiTags('render')
@ApiKeyAuth()
@Controller('v1/render-keys')
export class RenderKeysController {
  constructor(private readonly renderKeys: RenderKeysService) {}

  @Post()
  @HttpCode(201)
  @Idempotent()
  @ApiOperation({
    operationId: 'createRenderKey',
    summary: 'Create a render key',
    description:
      'Creates a key that signs render links (`GET /v1/render/{renderKeyId}.{ext}`). It belongs to the calling API key: its renders count against that ' +
      "key's quota, and its links stop working when that key is revoked. The secret is shown only here and on rotation; sign links on a server, never " +
      'in a browser. Send an `Idempotency-Key` to retry safely.',
  })
  @ApiBody({
    type: CreateRenderKeyDto,
    examples: {
      any: { summary: 'Any host', value: {} },
      hosts: { summary: 'One site', value: { description: 'Open Graph images', allowedHosts: ['example.com', '*.example.com'] } },
    },
  })
  @ApiCreatedResponse({
    type: CreatedRenderKeyDto,
    description: 'Created; `secret` is shown only here',
    example: { ...KEY_EXAMPLE, secret: SECRET_EXAMPLE },
  })
  @ApiPlanLimitedCreateErrors('render keys as its plan allows (free 2, starter 10, pro 50)')
  createRenderKey(@CurrentApiKey() caller: AuthenticatedKey, @Body() dto: CreateRenderKeyDto): Promise<CreatedRenderKeyDto> {
    return this.renderKeys.create(caller, dto);
  }

  @ApiListRoute(
    {
      operationId: 'listRenderKeys',
      summary: 'List render keys',
      description: "The account's render keys, oldest first, without secrets.",
    },
    { type: RenderKeyListDto, description: 'The render keys', example: { data: [KEY_EXAMPLE] } },
  )
  listRenderKeys(@CurrentApiKey() caller: AuthenticatedKey): Promise<RenderKeyListDto> {
    return this.renderKeys.list(caller);
  }

  @Post(':id/rotate')
  @HttpCode(200)
  @Idempotent()
  @KEY_ID
  @ApiOperation({
    operationId: 'rotateRenderKey',
    summary: "Rotate a render key's secret",
    description:
      'Replaces the secret; the new one is shown only in this response. With `expiresInSeconds` (at most 7 days) links signed with the old secret stay ' +
      'valid until then. Send an `Idempotency-Key` to retry safely: a retry gets the same new secret back.',
  })
  @ApiBody({
    type: RotateRenderKeyDto,
    required: false,
    examples: {
      now: { summary: 'The old secret stops at once', value: {} },
      overlap: { summary: 'Both sign for a day', value: { expiresInSeconds: 86400 } },
    },
  })
  @ApiOkResponse({
    type: RotatedRenderKeyDto,
    description: 'The new secret, shown only here',
    example: { id: KEY_EXAMPLE.id, secret: SECRET_EXAMPLE },
  })
  @ApiErrorResponses(...CHANGE_ERRORS)
  rotateRenderKey(
    @CurrentApiKey() caller: AuthenticatedKey,
    @Param('id') id: string,
    @Body() dto: RotateRenderKeyDto,
  ): Promise<RotatedRenderKeyDto> {
    return this.renderKeys.rotate(caller, id, dto);
  }

  @ApiDeleteRoute(KEY_ID, {
    operationId: 'deleteRenderKey',
    summary: 'Delete a render key',
    description: 'Deletes the key; its links answer 401 `INVALID_SIGNATURE` at once.',
  })
  deleteRenderKey(@CurrentApiKey() caller: AuthenticatedKey, @Param('id') id: string): Promise<void> {
    return this.renderKeys.remove(caller, id);
  }
}
