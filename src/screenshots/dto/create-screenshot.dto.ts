import { applyDecorators } from '@nestjs/common';
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

/**
 * Decorators of the capture options (documentation and validation), shared by the JSON body of
 * `POST /v1/screenshot` and the form fields of `POST /v1/screenshot/upload`, so the rules live once.
 */
export const CaptureOption = {
  width: () =>
    applyDecorators(
      ApiPropertyOptional({ description: 'Viewport width in px', minimum: 100, maximum: 3840, default: 1280, type: 'integer' }),
      IsOptional(),
      IsInt(),
      Min(SCREENSHOT_LIMITS.width.min),
      Max(SCREENSHOT_LIMITS.width.max),
    ),
  height: () =>
    applyDecorators(
      ApiPropertyOptional({ description: 'Viewport height in px', minimum: 100, maximum: 4320, default: 800, type: 'integer' }),
      IsOptional(),
      IsInt(),
      Min(SCREENSHOT_LIMITS.height.min),
      Max(SCREENSHOT_LIMITS.height.max),
    ),
  fullPage: () =>
    applyDecorators(
      ApiPropertyOptional({
        description: 'Capture the full scrollable page instead of the viewport (height capped at 16,384 px; the job says `clipped`)',
        default: false,
      }),
      IsOptional(),
      IsBoolean(),
    ),
  format: () =>
    applyDecorators(ApiPropertyOptional({ description: 'Image format', enum: IMAGE_FORMATS, default: 'png' }), IsOptional(), IsIn(IMAGE_FORMATS)),
  delay: () =>
    applyDecorators(
      ApiPropertyOptional({ description: 'Milliseconds to wait after the page load event', minimum: 0, maximum: 10000, default: 0, type: 'integer' }),
      IsOptional(),
      IsInt(),
      Min(SCREENSHOT_LIMITS.delayMs.min),
      Max(SCREENSHOT_LIMITS.delayMs.max),
    ),
};

/** Body of `POST /v1/screenshot` (spec section 2.1). Unknown fields are rejected. */
export class CreateScreenshotDto {
  @ApiProperty({
    description: 'Absolute http(s) URL of the page to capture; no user name, password or port 0',
    maxLength: 2048,
    example: 'https://example.com',
  })
  @IsHttpUrl(SCREENSHOT_LIMITS.urlMaxLength)
  url: string;

  @CaptureOption.width()
  width?: number;

  @CaptureOption.height()
  height?: number;

  @CaptureOption.fullPage()
  fullPage?: boolean;

  @CaptureOption.format()
  format?: ImageFormat;

  @CaptureOption.delay()
  delay?: number;
}
