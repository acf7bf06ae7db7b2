import { ApiProperty, ApiPropertyOptional, PartialType } from '@nestjs/swagger';
import { z } from 'zod';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsString, Matches, MaxLength, MinLength } from 'class-validator';
import { IsOptional } from 'class-validator';
import { HOST_PATTERN } from '../../common/host-patterns';
import { jsonSchemaOf, MatchesSchema } from '../../common/validation';
import { storageStateSchema, StorageStateInput } from '../storage-state';

/** Limits of a profile's fields (CONTRACT.md, "Browser profiles"). */
export const PROFILE_LIMITS = { nameMaxLength: 100, allowedDomainsMax: 20 } as const;

/**
 * A run's `saveProfile` (CONTRACT.md, "Browser profiles": recording a login): an existing profile of
 * the account, or a new one with these name and domains.
 */
export const SAVE_PROFILE_SCHEMA = z.union(
  [
    z.strictObject({
      profileId: z
        .string('must be a string')
        .regex(/^prf_[0-9A-Za-z]{24}$/, 'must be a profile id (prf_…)')
        .meta({ description: 'A profile of the account whose state is replaced' }),
    }),
    z.strictObject({
      name: z
        .string('must be a string')
        .min(1, 'must not be empty')
        .max(PROFILE_LIMITS.nameMaxLength, `must be at most ${PROFILE_LIMITS.nameMaxLength} characters`)
        .meta({ description: 'Name of the new profile' }),
      allowedDomains: z
        .array(z.string('must be a string').regex(HOST_PATTERN, 'must be a lower-case host name, optionally starting with "*."'))
        .min(1, 'must have at least 1 host')
        .max(PROFILE_LIMITS.allowedDomainsMax, `must have at most ${PROFILE_LIMITS.allowedDomainsMax} hosts`)
        .meta({ description: 'Hosts of the new profile (as in POST /v1/profiles)' }),
    }),
  ],
  'must be { profileId } or { name, allowedDomains }',
);

export type SaveProfileInput = z.output<typeof SAVE_PROFILE_SCHEMA>;

/** JSON Schema of `storageState` (OpenAPI). */
const STORAGE_STATE_JSON_SCHEMA = jsonSchemaOf(storageStateSchema);

/** Body of `POST /v1/profiles`. Unknown fields are rejected. */
export class CreateProfileDto {
  @ApiProperty({ description: 'A label', minLength: 1, maxLength: PROFILE_LIMITS.nameMaxLength, example: 'Staging admin' })
  @IsString()
  @MinLength(1)
  @MaxLength(PROFILE_LIMITS.nameMaxLength)
  name: string;

  @ApiProperty({
    description:
      'Hosts the profile may be used for and whose cookies and local storage it keeps: exact (`app.example.com`) or with one leading ' +
      'wildcard (`*.example.com`: any subdomain, not the apex), lower case. A capture with the profile must target one of them.',
    type: [String],
    minItems: 1,
    maxItems: PROFILE_LIMITS.allowedDomainsMax,
    example: ['app.example.com'],
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(PROFILE_LIMITS.allowedDomainsMax)
  @IsString({ each: true })
  @Matches(HOST_PATTERN, {
    each: true,
    message: 'each value in allowedDomains must be a lower-case host name, optionally starting with "*."',
  })
  allowedDomains: string[];

  @ApiPropertyOptional({ ...STORAGE_STATE_JSON_SCHEMA, writeOnly: true })
  @IsOptional()
  @MatchesSchema(storageStateSchema)
  storageState?: StorageStateInput;
}

/** Body of `PATCH /v1/profiles/{id}`: any field of the create body; `storageState` replaces the whole state. */
export class UpdateProfileDto extends PartialType(CreateProfileDto) {}

/** A browser profile as returned: never its cookies or local storage. */
export class ProfileDto {
  @ApiProperty({ example: 'prf_4fQx9LmZ2pRt7YvB1nKc3sDw' })
  id: string;

  @ApiProperty({ example: 'Staging admin' })
  name: string;

  @ApiProperty({ type: [String], example: ['app.example.com'] })
  allowedDomains: string[];

  @ApiProperty({ type: 'integer', description: 'Cookies kept (within allowedDomains)' })
  cookieCount: number;

  @ApiProperty({ type: 'integer', description: 'Origins with local storage kept (within allowedDomains)' })
  originCount: number;

  @ApiProperty({ type: 'integer', description: "Bytes of the kept state's JSON" })
  sizeBytes: number;

  @ApiProperty({ format: 'date-time' })
  createdAt: string;

  @ApiProperty({ format: 'date-time', description: 'Last change of the name, domains or state' })
  updatedAt: string;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, description: 'When a capture or run last started with it' })
  lastUsedAt: string | null;
}

/** `GET /v1/profiles`: a page, newest first. */
export class ProfileListDto {
  @ApiProperty({ type: [ProfileDto] })
  data: ProfileDto[];

  @ApiProperty({ type: 'string', nullable: true, description: 'Pass as `cursor` for the next page; null on the last page' })
  nextCursor: string | null;
}
