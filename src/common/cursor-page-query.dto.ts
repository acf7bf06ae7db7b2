import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';

/**
 * Query of a cursor-paged list (`GET /v1/runs`, `GET /v1/monitors`, `GET /v1/monitors/{id}/checks`):
 * `limit` 1–100 (default 20) and the `nextCursor` of the previous page. A list with filters extends it.
 */
export class CursorPageQueryDto {
  @ApiPropertyOptional({ description: 'Page size', type: 'integer', minimum: 1, maximum: 100, default: 20 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100)
  limit?: number;

  @ApiPropertyOptional({ description: '`nextCursor` of the previous page' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  cursor?: string;
}
