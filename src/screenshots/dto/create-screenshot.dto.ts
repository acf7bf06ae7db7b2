import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional } from 'class-validator';
import {
  CAPTURE_LIMITS,
  CAPTURE_OPTION_FIELDS,
  CAPTURE_OPTION_NAMES,
  captureOptionJsonSchema,
  CaptureOptionName,
  CaptureOptionsInput,
} from '../../capture/capture-options';
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
export const CaptureOption = Object.fromEntries(CAPTURE_OPTION_NAMES.map((name) => [name, () => optionDecorators(name)])) as {
  [K in CaptureOptionName]: () => PropertyDecorator;
};

/**
 * A DTO base class with one optional property per option of `names` (in the table's order), each with
 * its {@link CaptureOption} decorators; typed as the options as sent. Request DTOs extend it.
 */
export function captureOptionsDtoOf<N extends CaptureOptionName>(names: readonly N[]): new () => Pick<CaptureOptionsInput, N> {
  class OptionsDto {}
  for (const name of names) CaptureOption[name]()(OptionsDto.prototype, name);
  return OptionsDto as new () => Pick<CaptureOptionsInput, N>;
}

/**
 * The capture options as DTO properties (CONTRACT.md, "Capture options"), one per entry of
 * `CAPTURE_OPTION_TABLE`. Combinations the contract refuses (`selector` with `fullPage`, `quality` with
 * `png`, …) are checked by the service with `captureOptionConflicts`.
 */
export const CaptureOptionsDto = captureOptionsDtoOf(CAPTURE_OPTION_NAMES);
export type CaptureOptionsDto = CaptureOptionsInput;

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
