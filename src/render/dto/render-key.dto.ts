import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { HOST_PATTERN } from '../../common/host-patterns';
import { ArrayMaxSize, IsArray, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';

/** Limits of render keys (CONTRACT.md, "Render links"). */
export const RENDER_KEY_LIMITS = { allowedHostsMax: 50, descriptionMaxLength: 500, rotationOverlapMaxS: 604_800 } as const;

/** Body of `POST /v1/render-keys`. Unknown fields are rejected. */
export class CreateRenderKeyDto {
  @ApiPropertyOptional({ description: 'Free-text label', maxLength: RENDER_KEY_LIMITS.descriptionMaxLength, default: '' })
  @IsOptional()
  @IsString()
  @MaxLength(RENDER_KEY_LIMITS.descriptionMaxLength)
  description?: string;

  @ApiPropertyOptional({
    description:
      'Hosts the links of this key may capture: exact (`example.com`) or with one leading wildcard (`*.example.com`: any subdomain, not the apex), ' +
      'lower case. Absent or empty: any host.',
    type: [String],
    maxItems: RENDER_KEY_LIMITS.allowedHostsMax,
    example: ['example.com', '*.example.com'],
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(RENDER_KEY_LIMITS.allowedHostsMax)
  @IsString({ each: true })
  @Matches(HOST_PATTERN, {
    each: true,
    message: 'each value in allowedHosts must be a lower-case host name, optionally starting with "*."',
  })
  allowedHosts?: string[];
}

/** Body of `POST /v1/render-keys/{id}/rotate`. */
export class RotateRenderKeyDto {
  @ApiPropertyOptional({
    description: 'Seconds the old secret keeps signing valid links (0: it stops at once)',
    minimum: 0,
    maximum: RENDER_KEY_LIMITS.rotationOverlapMaxS,
    default: 0,
  })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(RENDER_KEY_LIMITS.rotationOverlapMaxS)
  expiresInSeconds?: number;
}

/** A render key as listed (never its secret). */
export class RenderKeyDto {
  @ApiProperty({ example: 'rk_4fQx9LmZ2pRt7YvB1nKc3sDw' })
  id: string;

  @ApiProperty({
    description: 'The API key whose quota the renders use; revoking it stops the links',
    example: 'key_8cV1nQw3ZrT5yU7iO9pA2sD4',
  })
  apiKeyId: string;

  @ApiProperty()
  description: string;

  @ApiProperty({ type: [String] })
  allowedHosts: string[];

  @ApiProperty({ format: 'date-time' })
  createdAt: string;
}

/** The answer of `POST /v1/render-keys`: the key with its secret, shown only here. */
export class CreatedRenderKeyDto extends RenderKeyDto {
  @ApiProperty({
    description: '`rks_` + 40 base62 characters; shown only here and on rotation',
    example: 'rks_Jd0aZxY2mNw8PqRs4kq1Jd0aZxY2mNw8PqRs4kq1',
  })
  secret: string;
}

/** `GET /v1/render-keys`. */
export class RenderKeyListDto {
  @ApiProperty({ type: [RenderKeyDto] })
  data: RenderKeyDto[];
}

/** The answer of `POST /v1/render-keys/{id}/rotate`. */
export class RotatedRenderKeyDto {
  @ApiProperty({ example: 'rk_4fQx9LmZ2pRt7YvB1nKc3sDw' })
  id: string;

  @ApiProperty({ description: 'The new secret, shown only here' })
  secret: string;
}
