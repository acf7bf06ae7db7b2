import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsInt, IsOptional, Max, Min } from 'class-validator';
import { IMAGE_FORMATS, ImageFormat } from '../../capture/image-format';
import { IsHttpUrl } from '../../common/validation';

/** Limits of the capture options (CONTRACT.md, "Screenshot jobs"). */
export const SCREENSHOT_LIMITS = {
  urlMaxLength: 2048,
  width: { min: 100, max: 3840, default: 1280 },
  height: { min: 100, max: 4320, default: 800 },
  delayMs: { min: 0, max: 10000, default: 0 },
} as const;

/** Body of `POST /v1/screenshot` (spec section 2.1). Unknown fields are rejected. */
export class CreateScreenshotDto {
  @ApiProperty({ description: 'Absolute http(s) URL of the page to capture', maxLength: 2048, example: 'https://example.com' })
  @IsHttpUrl(SCREENSHOT_LIMITS.urlMaxLength)
  url: string;

  @ApiPropertyOptional({ description: 'Viewport width in px', minimum: 100, maximum: 3840, default: 1280, type: 'integer' })
  @IsOptional()
  @IsInt()
  @Min(SCREENSHOT_LIMITS.width.min)
  @Max(SCREENSHOT_LIMITS.width.max)
  width?: number;

  @ApiPropertyOptional({ description: 'Viewport height in px', minimum: 100, maximum: 4320, default: 800, type: 'integer' })
  @IsOptional()
  @IsInt()
  @Min(SCREENSHOT_LIMITS.height.min)
  @Max(SCREENSHOT_LIMITS.height.max)
  height?: number;

  @ApiPropertyOptional({ description: 'Capture the full scrollable page instead of the viewport', default: false })
  @IsOptional()
  @IsBoolean()
  fullPage?: boolean;

  @ApiPropertyOptional({ description: 'Image format', enum: IMAGE_FORMATS, default: 'png' })
  @IsOptional()
  @IsIn(IMAGE_FORMATS)
  format?: ImageFormat;

  @ApiPropertyOptional({ description: 'Milliseconds to wait after the page load event', minimum: 0, maximum: 10000, default: 0, type: 'integer' })
  @IsOptional()
  @IsInt()
  @Min(SCREENSHOT_LIMITS.delayMs.min)
  @Max(SCREENSHOT_LIMITS.delayMs.max)
  delay?: number;
}
