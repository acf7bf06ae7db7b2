import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsBoolean, IsInt, IsOptional, Max, Min, ValidateNested } from 'class-validator';
import { SESSION_OPTION_NAMES } from '../../capture/capture-options';
import { IsHttpUrl, jsonSchemaOf, MatchesSchema } from '../../common/validation';
import { SAVE_PROFILE_SCHEMA, SaveProfileInput } from '../../profiles/dto/profile.dto';
import { captureOptionsDtoOf } from '../../screenshots/dto/create-screenshot.dto';
import { RUN_LIMITS } from '../run-steps';
import { RunStepDto, STEP_SCHEMA, toStepInstances } from './run-step.dto';

/**
 * Body of `POST /v1/runs` (CONTRACT.md, "Browser session runs"): the first page, the steps, the video
 * switch, the run's budget and the session options: the capture options marked `session` in
 * `CAPTURE_OPTION_TABLE`, with their rules (docs/capture-options.md). Unknown fields are rejected.
 */
export class CreateRunDto extends captureOptionsDtoOf(SESSION_OPTION_NAMES) {
  @ApiProperty({
    description: "Absolute http(s) URL of the first page (same rules as a capture's `url`)",
    maxLength: 2048,
    example: 'https://example.com/login',
  })
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

  @ApiPropertyOptional({
    ...jsonSchemaOf(SAVE_PROFILE_SCHEMA),
    description:
      'Record a login (CONTRACT.md, "Browser profiles"): when the run completes (not when it fails), the session\'s cookies and local storage, ' +
      'filtered to the allowedDomains, replace the state of the profile `profileId`, or become a new profile `{ name, allowedDomains }`; ' +
      'the run object then says `savedProfileId`. Use `fill` with `sensitive: true` for passwords.',
  })
  @IsOptional()
  @MatchesSchema(SAVE_PROFILE_SCHEMA)
  saveProfile?: SaveProfileInput;
}
