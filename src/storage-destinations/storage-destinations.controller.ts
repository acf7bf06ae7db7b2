import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { AuthenticatedKey } from '../auth/api-keys.service';
import { ApiKeyAuth, CurrentApiKey } from '../auth/current-api-key.decorator';
import { ApiErrorResponses } from '../common/api-error-responses.decorator';
import { ApiDeleteRoute, ApiGetRoute, ApiListRoute, ApiPlanLimitedCreateErrors } from '../common/api-resource-routes.decorator';
import { Idempotent } from '../idempotency/idempotent.decorator';
import {
  CreateStorageDestinationDto,
  StorageDestinationDto,
  StorageDestinationListDto,
  StorageDestinationTestDto,
} from './dto/storage-destination.dto';
import { StorageDestinationsService } from './storage-destinations.service';

const EXAMPLE = {
  id: 'dst_4fQx9LmZ2pRt7YvB1nKc3sDw',
  type: 's3',
  bucket: 'my-screenshots',
  region: 'eu-central-1',
  endpoint: null,
  forcePathStyle: false,
  prefix: 'glimpse/',
  description: 'Production bucket',
  createdAt: '2026-11-20T12:00:00.000Z',
};
const DESTINATION_ID = ApiParam({ name: 'id', description: 'Storage destination id (`dst_…`)', example: EXAMPLE.id });

/** Storage destinations: customers' buckets that results are uploaded to (CONTRACT.md, "Storage destinations"). */
@ApiTags('storage')
@ApiKeyAuth()
@Controller('v1/storage-destinations')
export class StorageDestinationsController {
  constructor(private readonly destinations: StorageDestinationsService) {}

  @Post()
  @HttpCode(201)
  @Idempotent()
  @ApiOperation({
    operationId: 'createStorageDestination',
    summary: 'Add a storage destination',
    description:
      'Adds an S3-compatible bucket that captures can be uploaded to (capture option `storage`). The credentials are stored sealed and never ' +
      'returned. The bucket is not contacted here: call the test operation. The endpoint host must pass the SSRF guard. Send an ' +
      '`Idempotency-Key` to retry safely.',
  })
  @ApiBody({
    type: CreateStorageDestinationDto,
    examples: {
      aws: {
        summary: 'AWS S3',
        value: {
          type: 's3',
          bucket: 'my-screenshots',
          region: 'eu-central-1',
          accessKeyId: 'AKIA…',
          secretAccessKey: '…',
          prefix: 'glimpse/',
        },
      },
      minio: {
        summary: 'MinIO',
        value: {
          type: 's3',
          bucket: 'shots',
          endpoint: 'https://minio.example.com',
          forcePathStyle: true,
          accessKeyId: 'minio-user',
          secretAccessKey: '…',
        },
      },
    },
  })
  @ApiCreatedResponse({ type: StorageDestinationDto, description: 'Added (without credentials)', example: EXAMPLE })
  @ApiPlanLimitedCreateErrors('storage destinations as its plan allows (free 1, starter 5, pro 20)')
  createStorageDestination(
    @CurrentApiKey() caller: AuthenticatedKey,
    @Body() dto: CreateStorageDestinationDto,
  ): Promise<StorageDestinationDto> {
    return this.destinations.create(caller, dto);
  }

  @ApiListRoute(
    {
      operationId: 'listStorageDestinations',
      summary: 'List storage destinations',
      description: "The account's destinations, oldest first.",
    },
    { type: StorageDestinationListDto, description: 'The destinations', example: { data: [EXAMPLE] } },
  )
  listStorageDestinations(@CurrentApiKey() caller: AuthenticatedKey): Promise<StorageDestinationListDto> {
    return this.destinations.list(caller);
  }

  @ApiGetRoute(
    DESTINATION_ID,
    {
      operationId: 'getStorageDestination',
      summary: 'Get a storage destination',
      description: 'One destination, without credentials.',
    },
    { type: StorageDestinationDto, description: 'The destination', example: EXAMPLE },
  )
  getStorageDestination(@CurrentApiKey() caller: AuthenticatedKey, @Param('id') id: string): Promise<StorageDestinationDto> {
    return this.destinations.get(caller, id);
  }

  @Post(':id/test')
  @HttpCode(200)
  @DESTINATION_ID
  @ApiOperation({
    operationId: 'testStorageDestination',
    summary: 'Test a storage destination',
    description:
      'Writes a small object under the prefix and deletes it again. `ok` false with `error` saying why (credentials, bucket, network, an ' +
      'answer over 1 MiB, a timeout): the answer is 200 either way. At most 10 per destination per minute (429 `RATE_LIMITED`).',
  })
  @ApiOkResponse({
    type: StorageDestinationTestDto,
    description: 'The outcome',
    example: { ok: false, error: 'the access key id is not known to the bucket (InvalidAccessKeyId), HTTP 403' },
  })
  @ApiErrorResponses(
    401,
    404,
    {
      status: 429,
      codes: ['RATE_LIMITED'],
      description:
        'More than 10 tests of this destination in the last minute (or over the per-second rate); retry after `Retry-After` seconds',
    },
    500,
  )
  testStorageDestination(@CurrentApiKey() caller: AuthenticatedKey, @Param('id') id: string): Promise<StorageDestinationTestDto> {
    return this.destinations.test(caller, id);
  }

  @ApiDeleteRoute(DESTINATION_ID, {
    operationId: 'deleteStorageDestination',
    summary: 'Delete a storage destination',
    description: 'Deletes the destination and its credentials; captures naming it are refused from now on. Objects already uploaded stay.',
  })
  deleteStorageDestination(@CurrentApiKey() caller: AuthenticatedKey, @Param('id') id: string): Promise<void> {
    return this.destinations.remove(caller, id);
  }
}
