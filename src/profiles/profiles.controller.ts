import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { AuthenticatedKey } from '../auth/api-keys.service';
import { ApiKeyAuth, CurrentApiKey } from '../auth/current-api-key.decorator';
import { ApiErrorResponses } from '../common/api-error-responses.decorator';
import { CursorPageQueryDto } from '../common/cursor-page-query.dto';
import { Idempotent } from '../idempotency/idempotent.decorator';
import { CreateProfileDto, ProfileDto, ProfileListDto, UpdateProfileDto } from './dto/profile.dto';
import { ProfilesService } from './profiles.service';

const EXAMPLE: ProfileDto = {
  id: 'prf_4fQx9LmZ2pRt7YvB1nKc3sDw',
  name: 'Staging admin',
  allowedDomains: ['app.example.com'],
  cookieCount: 3,
  originCount: 1,
  sizeBytes: 1874,
  createdAt: '2026-11-20T12:00:00.000Z',
  updatedAt: '2026-11-20T12:00:00.000Z',
  lastUsedAt: null,
};
const PROFILE_ID = ApiParam({ name: 'id', description: 'Profile id (`prf_…`)', example: EXAMPLE.id });
const PLAN_LIMIT = {
  status: 403 as const,
  codes: ['PLAN_LIMIT_REACHED' as const],
  description: 'The account already has as many profiles as its plan allows (free 2, starter 10, pro 50)',
};

/** Browser profiles: saved logged-in browser states (CONTRACT.md, "Browser profiles (logged-in captures)"). */
@ApiTags('profiles')
@ApiKeyAuth()
@Controller('v1/profiles')
export class ProfilesController {
  constructor(private readonly profiles: ProfilesService) {}

  @Post()
  @HttpCode(201)
  @Idempotent()
  @ApiOperation({
    operationId: 'createProfile',
    summary: 'Add a browser profile',
    description:
      "Stores a browser state (Playwright's `storageState()` file as it is: cookies and local storage) that captures, monitors, render links " +
      'and runs can start with (option `profile`). Cookies and origins outside `allowedDomains` are dropped; the state is stored sealed and ' +
      'never returned. Without `storageState` the profile starts empty (record one with a run and `saveProfile`). Send an `Idempotency-Key` to retry safely.',
  })
  @ApiBody({
    type: CreateProfileDto,
    examples: {
      state: {
        summary: 'From a Playwright state file',
        value: {
          name: 'Staging admin',
          allowedDomains: ['app.example.com'],
          storageState: {
            cookies: [
              {
                name: 'session',
                value: '…',
                domain: 'app.example.com',
                path: '/',
                expires: -1,
                httpOnly: true,
                secure: true,
                sameSite: 'Lax',
              },
            ],
            origins: [{ origin: 'https://app.example.com', localStorage: [{ name: 'token', value: '…' }] }],
          },
        },
      },
      empty: { summary: 'Empty, for a run to record', value: { name: 'Staging admin', allowedDomains: ['app.example.com'] } },
    },
  })
  @ApiCreatedResponse({ type: ProfileDto, description: 'Added (never its state)', example: EXAMPLE })
  @ApiErrorResponses(400, 401, PLAN_LIMIT, 413, 415, 500)
  createProfile(@CurrentApiKey() caller: AuthenticatedKey, @Body() dto: CreateProfileDto): Promise<ProfileDto> {
    return this.profiles.create(caller, dto);
  }

  @Get()
  @ApiOperation({
    operationId: 'listProfiles',
    summary: 'List browser profiles',
    description: "The account's profiles, newest first, `limit` per page; pass `nextCursor` as `cursor` for the next page.",
  })
  @ApiOkResponse({ type: ProfileListDto, description: 'A page of profiles', example: { data: [EXAMPLE], nextCursor: null } })
  @ApiErrorResponses(400, 401, 500)
  listProfiles(@CurrentApiKey() caller: AuthenticatedKey, @Query() query: CursorPageQueryDto): Promise<ProfileListDto> {
    return this.profiles.list(caller, query);
  }

  @Get(':id')
  @PROFILE_ID
  @ApiOperation({ operationId: 'getProfile', summary: 'Get a browser profile', description: 'One profile, never its state.' })
  @ApiOkResponse({ type: ProfileDto, description: 'The profile', example: EXAMPLE })
  @ApiErrorResponses(401, 404, 500)
  getProfile(@CurrentApiKey() caller: AuthenticatedKey, @Param('id') id: string): Promise<ProfileDto> {
    return this.profiles.get(caller, id);
  }

  @Patch(':id')
  @PROFILE_ID
  @ApiOperation({
    operationId: 'updateProfile',
    summary: 'Change a browser profile',
    description:
      'Takes any field of the create body: `storageState` replaces the whole state; new `allowedDomains` also filter the stored state. ' +
      'A new state or domains let `profile.expired` fire again and are never answered from captures cached with the old state.',
  })
  @ApiBody({ type: UpdateProfileDto, examples: { rename: { summary: 'Rename', value: { name: 'Production admin' } } } })
  @ApiOkResponse({ type: ProfileDto, description: 'The profile', example: EXAMPLE })
  @ApiErrorResponses(400, 401, 404, 413, 415, 500)
  updateProfile(@CurrentApiKey() caller: AuthenticatedKey, @Param('id') id: string, @Body() dto: UpdateProfileDto): Promise<ProfileDto> {
    return this.profiles.update(caller, id, dto);
  }

  @Delete(':id')
  @HttpCode(204)
  @PROFILE_ID
  @ApiOperation({
    operationId: 'deleteProfile',
    summary: 'Delete a browser profile',
    description: 'Deletes the profile and its state; captures, monitors and links naming it fail from now on.',
  })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiErrorResponses(401, 404, 500)
  deleteProfile(@CurrentApiKey() caller: AuthenticatedKey, @Param('id') id: string): Promise<void> {
    return this.profiles.remove(caller, id);
  }
}
