import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsBoolean, IsInt, IsOptional, Max, Min, ValidateNested } from 'class-validator';
import type { CaptureCookie, CaptureOptionsInput } from '../../capture/capture-options';
import { IsHttpUrl } from '../../common/validation';
import { CaptureOption } from '../../screenshots/dto/create-screenshot.dto';
import { RUN_LIMITS } from '../run-steps';
import { RunStepDto, STEP_SCHEMA, toStepInstances } from './run-step.dto';

/**
 * Body of `POST /v1/runs` (CONTRACT.md, "Browser session runs"): the first page, the steps, the video
 * switch, the run's budget and the session options, which are the capture options of the same names
 * with their rules (`CaptureOption` decorators). Unknown fields are rejected.
 */
export class CreateRunDto {
  @ApiProperty({ description: 'Absolute http(s) URL of the first page (same rules as a capture\'s `url`)', maxLength: 2048, example: 'https://example.com/login' })
  @IsHttpUrl(2048)
  url: string;

  @ApiPropertyOptional({
    description: 'Steps performed in order after the first page has loaded (0-50). Each is one of the actions below, chosen by `action`.',
    type: 'array',
    items: STEP_SCHEMA,
    maxItems: RUN_LIMITS.maxSteps,
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(RUN_LIMITS.maxSteps)
  @Transform(toStepInstances)
  @ValidateNested({ each: true })
  steps?: RunStepDto[];

  @ApiPropertyOptional({ description: 'Record a WebM video of the session (at the viewport size)', default: true })
  @IsOptional()
  @IsBoolean()
  video?: boolean;

  @ApiPropertyOptional({
    description: "The whole run's time budget in ms, from the session's start to the end of the last step",
    type: 'integer',
    minimum: RUN_LIMITS.timeoutMs.min,
    maximum: RUN_LIMITS.timeoutMs.max,
    default: RUN_LIMITS.timeoutMs.default,
  })
  @IsOptional()
  @IsInt()
  @Min(RUN_LIMITS.timeoutMs.min)
  @Max(RUN_LIMITS.timeoutMs.max)
  timeoutMs?: number;

  @CaptureOption.width()
  width?: number;

  @CaptureOption.height()
  height?: number;

  @CaptureOption.scale()
  scale?: number;

  @CaptureOption.device()
  device?: string;

  @CaptureOption.userAgent()
  userAgent?: string;

  @CaptureOption.headers()
  headers?: Record<string, string>;

  @CaptureOption.cookies()
  cookies?: CaptureCookie[];

  @CaptureOption.locale()
  locale?: string;

  @CaptureOption.timezone()
  timezone?: string;

  @CaptureOption.darkMode()
  darkMode?: boolean;

  @CaptureOption.reducedMotion()
  reducedMotion?: boolean;

  @CaptureOption.blockAds()
  blockAds?: boolean;

  @CaptureOption.blockTrackers()
  blockTrackers?: boolean;

  @CaptureOption.blockCookieBanners()
  blockCookieBanners?: boolean;
}

/** The session options of a run request, as capture options (same names, rules and defaults). */
export function sessionInputOf(dto: CreateRunDto): CaptureOptionsInput {
  const { width, height, scale, device, userAgent, headers, cookies, locale, timezone, darkMode, reducedMotion, blockAds, blockTrackers, blockCookieBanners } = dto;
  return { width, height, scale, device, userAgent, headers, cookies, locale, timezone, darkMode, reducedMotion, blockAds, blockTrackers, blockCookieBanners };
}
