import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional } from 'class-validator';
import {
  CAPTURE_LIMITS,
  CAPTURE_OPTION_FIELDS,
  captureOptionJsonSchema,
  CaptureOptionName,
  CaptureOptionsInput,
  CaptureCookie,
  ClipRect,
  PdfPaper,
  WaitUntil,
} from '../../capture/capture-options';
import type { ResultFormat } from '../../results/result-formats';
import { IsHttpUrl, MatchesSchema } from '../../common/validation';

/** OpenAPI property and validation of one option, both derived from its schema in {@link CAPTURE_OPTION_FIELDS}. */
function optionDecorators(name: CaptureOptionName): PropertyDecorator {
  return applyDecorators(ApiPropertyOptional(captureOptionJsonSchema(name)), IsOptional(), MatchesSchema(CAPTURE_OPTION_FIELDS[name]));
}

/**
 * Decorators of the capture options (documentation and validation), shared by the JSON body of
 * `POST /v1/screenshot`, batch items, the form fields of `POST /v1/screenshot/upload` and the MCP tool,
 * all derived from {@link CAPTURE_OPTION_FIELDS}, so the rules live once.
 */
export const CaptureOption = Object.fromEntries(
  Object.keys(CAPTURE_OPTION_FIELDS).map((name) => [name, () => optionDecorators(name as CaptureOptionName)]),
) as { [K in CaptureOptionName]: () => PropertyDecorator };

/**
 * The capture options as DTO properties (CONTRACT.md, "Capture options"). Combinations the contract
 * refuses (`selector` with `fullPage`, `quality` with `png`, …) are checked by the service with
 * `captureOptionConflicts`.
 */
export class CaptureOptionsDto implements CaptureOptionsInput {
  @CaptureOption.width()
  width?: number;

  @CaptureOption.height()
  height?: number;

  @CaptureOption.fullPage()
  fullPage?: boolean;

  @CaptureOption.format()
  format?: ResultFormat;

  @CaptureOption.delay()
  delay?: number;

  @CaptureOption.selector()
  selector?: string;

  @CaptureOption.clip()
  clip?: ClipRect;

  @CaptureOption.scale()
  scale?: number;

  @CaptureOption.quality()
  quality?: number;

  @CaptureOption.waitUntil()
  waitUntil?: WaitUntil;

  @CaptureOption.waitForSelector()
  waitForSelector?: string;

  @CaptureOption.hideSelectors()
  hideSelectors?: string[];

  @CaptureOption.css()
  css?: string;

  @CaptureOption.javascript()
  javascript?: string;

  @CaptureOption.darkMode()
  darkMode?: boolean;

  @CaptureOption.reducedMotion()
  reducedMotion?: boolean;

  @CaptureOption.device()
  device?: string;

  @CaptureOption.userAgent()
  userAgent?: string;

  @CaptureOption.headers()
  headers?: Record<string, string>;

  @CaptureOption.cookies()
  cookies?: CaptureCookie[];

  @CaptureOption.timezone()
  timezone?: string;

  @CaptureOption.locale()
  locale?: string;

  @CaptureOption.blockAds()
  blockAds?: boolean;

  @CaptureOption.blockTrackers()
  blockTrackers?: boolean;

  @CaptureOption.blockCookieBanners()
  blockCookieBanners?: boolean;

  @CaptureOption.pdf()
  pdf?: { paper?: PdfPaper; landscape?: boolean; printBackground?: boolean };

  @CaptureOption.cache()
  cache?: boolean;

  @CaptureOption.cacheTtl()
  cacheTtl?: number;
}

/** Body of `POST /v1/screenshot` (spec section 2.1, CONTRACT.md "Capture options"). Unknown fields are rejected. */
export class CreateScreenshotDto extends CaptureOptionsDto {
  @ApiProperty({
    description: 'Absolute http(s) URL of the page to capture; no user name, password or port 0',
    maxLength: CAPTURE_LIMITS.urlMaxLength,
    example: 'https://example.com',
  })
  @IsHttpUrl(CAPTURE_LIMITS.urlMaxLength)
  url: string;
}
