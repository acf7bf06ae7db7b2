import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsBoolean, IsInt, IsNumber, IsOptional, IsString, Max, MaxLength, Min, ValidateBy, ValidateNested } from 'class-validator';
import { IsHttpUrl } from '../../common/validation';
import { CaptureOption } from '../../screenshots/dto/create-screenshot.dto';
import { RUN_LIMITS } from '../run-steps';
import { RunStepDto, STEP_SCHEMA, toStepInstances } from './run-step.dto';

/** Limits of the session options runs accept beyond the viewport (CONTRACT.md, "Capture options"). */
export const SESSION_LIMITS = {
  scale: { min: 1, max: 3, default: 1 },
  localeMaxLength: 35,
  timezoneMaxLength: 64,
} as const;

/** A BCP 47 language tag Chromium can use (`en-US`, `de`, `pt-BR`). */
function IsLocale() {
  return ValidateBy({
    name: 'isLocale',
    validator: {
      validate: (value: unknown) => {
        if (typeof value !== 'string' || !/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/.test(value) || value.length > SESSION_LIMITS.localeMaxLength) return false;
        try {
          return Intl.getCanonicalLocales(value).length === 1;
        } catch {
          return false;
        }
      },
      defaultMessage: () => 'must be a BCP 47 language tag such as en-US',
    },
  });
}

/** An IANA time zone name (`Europe/Berlin`, `UTC`). */
function IsTimezone() {
  return ValidateBy({
    name: 'isTimezone',
    validator: {
      validate: (value: unknown) => {
        if (typeof value !== 'string' || value.length > SESSION_LIMITS.timezoneMaxLength || !/^[A-Za-z0-9_+/-]+$/.test(value)) return false;
        try {
          new Intl.DateTimeFormat('en-US', { timeZone: value });
          return true;
        } catch {
          return false;
        }
      },
      defaultMessage: () => 'must be an IANA time zone name such as Europe/Berlin',
    },
  });
}

const Flag = (description: string) => applyDecorators(ApiPropertyOptional({ description, default: false }), IsOptional(), IsBoolean());

/**
 * Body of `POST /v1/runs` (CONTRACT.md, "Browser session runs"): the first page, the steps, the video
 * switch, the run's budget and the session options. Unknown fields are rejected.
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

  @ApiPropertyOptional({ description: 'Device scale factor (screenshots are width × scale px; the video stays at the viewport size)', minimum: 1, maximum: 3, default: 1 })
  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(SESSION_LIMITS.scale.min)
  @Max(SESSION_LIMITS.scale.max)
  scale?: number;

  @ApiPropertyOptional({ description: '`navigator.language` and `Accept-Language` (BCP 47)', example: 'de-DE', default: 'en-US', maxLength: SESSION_LIMITS.localeMaxLength })
  @IsOptional()
  @IsString()
  @MaxLength(SESSION_LIMITS.localeMaxLength)
  @IsLocale()
  locale?: string;

  @ApiPropertyOptional({ description: 'IANA time zone of `Date` and `Intl` in the page (default: the server\'s)', example: 'Europe/Berlin', maxLength: SESSION_LIMITS.timezoneMaxLength })
  @IsOptional()
  @IsString()
  @IsTimezone()
  timezone?: string;

  @Flag('`prefers-color-scheme: dark`')
  darkMode?: boolean;

  @Flag('`prefers-reduced-motion: reduce`')
  reducedMotion?: boolean;
}
