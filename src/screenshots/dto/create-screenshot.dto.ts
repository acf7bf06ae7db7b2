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
export const CaptureOption = Object.fromEntries(
  CAPTURE_OPTION_NAMES.map((name) => [name, () => optionDecorators(name)]),
) as { [K in CaptureOptionName]: () => PropertyDecorator };

/**
 * Declares each of `names` on `dto` as an optional property with its {@link CaptureOption}
 * decorators, in the table's order. Call it right after the class declaration, before any subclass is
 * declared (a subclass copies the parent's OpenAPI property list when it adds its own).
 */
export function declareCaptureOptions(dto: abstract new () => object, names: readonly CaptureOptionName[]): void {
  for (const name of names) CaptureOption[name]()(dto.prototype, name);
}

/**
 * The capture options as DTO properties (CONTRACT.md, "Capture options"), one per entry of
 * `CAPTURE_OPTION_TABLE`. Combinations the contract refuses (`selector` with `fullPage`, `quality` with
 * `png`, …) are checked by the service with `captureOptionConflicts`.
 */
export class CaptureOptionsDto {}
// The properties' types: the options as sent (declaration merging with the class above).
// eslint-disable-next-line @typescript-eslint/no-empty-object-type, @typescript-eslint/no-unsafe-declaration-merging
export interface CaptureOptionsDto extends CaptureOptionsInput {}
declareCaptureOptions(CaptureOptionsDto, CAPTURE_OPTION_NAMES);

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
