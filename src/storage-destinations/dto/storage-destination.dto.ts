import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsOptional, IsString, Matches, MaxLength, MinLength } from 'class-validator';
import { IsHttpUrl, NormalizeUrl } from '../../common/validation';
import { STORAGE_DESTINATION_TYPES, type StorageDestinationType } from '../storage-destination.entity';

/** Limits of a storage destination's fields (CONTRACT.md, "Storage destinations"). */
export const STORAGE_DESTINATION_LIMITS = {
  bucketMaxLength: 255,
  regionMaxLength: 64,
  endpointMaxLength: 2048,
  credentialMaxLength: 256,
  prefixMaxLength: 512,
  descriptionMaxLength: 500,
} as const;

const L = STORAGE_DESTINATION_LIMITS;

/** Body of `POST /v1/storage-destinations`. Unknown fields are rejected. */
export class CreateStorageDestinationDto {
  @ApiProperty({ enum: STORAGE_DESTINATION_TYPES, description: 'An S3-compatible bucket (AWS S3, MinIO, R2, Ceph, …)', example: 's3' })
  @IsIn(STORAGE_DESTINATION_TYPES, { message: `type must be one of ${STORAGE_DESTINATION_TYPES.join(', ')}` })
  type: StorageDestinationType;

  @ApiProperty({ description: 'Bucket name', maxLength: L.bucketMaxLength, example: 'my-screenshots' })
  @IsString()
  @MinLength(1)
  @MaxLength(L.bucketMaxLength)
  @Matches(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, { message: 'bucket must be a bucket name (letters, digits, dots, hyphens, underscores)' })
  bucket: string;

  @ApiPropertyOptional({ description: "The bucket's region", maxLength: L.regionMaxLength, default: 'us-east-1', example: 'eu-central-1' })
  @IsOptional()
  @IsString()
  @MaxLength(L.regionMaxLength)
  @Matches(/^[a-z0-9-]+$/, { message: 'region must be a region name such as eu-central-1' })
  region?: string;

  @ApiPropertyOptional({
    description:
      'Endpoint URL of an S3-compatible service (MinIO, R2, …); absent for AWS S3. Its host must pass the SSRF guard (no private or loopback addresses).',
    maxLength: L.endpointMaxLength,
    example: 'https://s3.eu-central-1.example.com',
  })
  @IsOptional()
  @NormalizeUrl()
  @IsHttpUrl(L.endpointMaxLength)
  endpoint?: string;

  @ApiPropertyOptional({ description: 'Path-style addressing (endpoint/bucket/key), as MinIO needs', default: false })
  @IsOptional()
  @IsBoolean()
  forcePathStyle?: boolean;

  @ApiProperty({ description: 'Access key id; stored sealed, never returned', maxLength: L.credentialMaxLength, writeOnly: true })
  @IsString()
  @MinLength(1)
  @MaxLength(L.credentialMaxLength)
  accessKeyId: string;

  @ApiProperty({ description: 'Secret access key; stored sealed, never returned', maxLength: L.credentialMaxLength, writeOnly: true })
  @IsString()
  @MinLength(1)
  @MaxLength(L.credentialMaxLength)
  secretAccessKey: string;

  @ApiPropertyOptional({ description: 'Prepended to every object key', maxLength: L.prefixMaxLength, default: '', example: 'glimpse/' })
  @IsOptional()
  @IsString()
  @MaxLength(L.prefixMaxLength)
  @Matches(/^[^/\x00-\x1f\x7f][^\x00-\x1f\x7f]*$|^$/, { message: 'prefix must not start with / nor contain control characters' })
  prefix?: string;

  @ApiPropertyOptional({ description: 'Free-text label', maxLength: L.descriptionMaxLength, default: '' })
  @IsOptional()
  @IsString()
  @MaxLength(L.descriptionMaxLength)
  description?: string;
}

/** A storage destination as returned (never its credentials). */
export class StorageDestinationDto {
  @ApiProperty({ example: 'dst_4fQx9LmZ2pRt7YvB1nKc3sDw' })
  id: string;

  @ApiProperty({ enum: STORAGE_DESTINATION_TYPES })
  type: StorageDestinationType;

  @ApiProperty()
  bucket: string;

  @ApiProperty()
  region: string;

  @ApiProperty({ type: 'string', nullable: true, description: 'Null for AWS S3' })
  endpoint: string | null;

  @ApiProperty()
  forcePathStyle: boolean;

  @ApiProperty()
  prefix: string;

  @ApiProperty()
  description: string;

  @ApiProperty({ format: 'date-time' })
  createdAt: string;
}

/** `GET /v1/storage-destinations`. */
export class StorageDestinationListDto {
  @ApiProperty({ type: [StorageDestinationDto] })
  data: StorageDestinationDto[];
}

/** The answer of `POST /v1/storage-destinations/{id}/test`. */
export class StorageDestinationTestDto {
  @ApiProperty({ description: 'True when a small object was written and deleted again' })
  ok: boolean;

  @ApiProperty({
    type: 'string',
    nullable: true,
    description: 'Why it failed (e.g. "the bucket refused the credentials (InvalidAccessKeyId)"); null when ok',
  })
  error: string | null;
}
