import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsInt, IsOptional, Max, Min } from 'class-validator';
import { CAPTURE_LIMITS, CAPTURE_OPTION_FIELDS, CaptureOptionsInput, CaptureOptionSchema } from '../../capture/capture-options';
import type { ImageFormat } from '../../capture/image-format';
import { IsHttpUrl } from '../../common/validation';

/** OpenAPI property and class-validator rules of one option, both derived from its schema. */
function optionDecorators(schema: CaptureOptionSchema): PropertyDecorator {
  switch (schema.type) {
    case 'integer':
      return applyDecorators(ApiPropertyOptional({ ...schema }), IsOptional(), IsInt(), Min(schema.minimum), Max(schema.maximum));
    case 'boolean':
      return applyDecorators(ApiPropertyOptional({ ...schema }), IsOptional(), IsBoolean());
    case 'string':
      return applyDecorators(ApiPropertyOptional({ ...schema, enum: [...schema.enum] }), IsOptional(), IsIn([...schema.enum]));
  }
}

/**
 * Decorators of the capture options (documentation and validation), shared by the JSON body of
 * `POST /v1/screenshot`, the form fields of `POST /v1/screenshot/upload` and the MCP tool, all derived
 * from {@link CAPTURE_OPTION_FIELDS}, so the rules live once.
 */
export const CaptureOption = Object.fromEntries(
  Object.entries(CAPTURE_OPTION_FIELDS).map(([name, schema]) => [name, () => optionDecorators(schema)]),
) as { [K in keyof typeof CAPTURE_OPTION_FIELDS]: () => PropertyDecorator };

/** Body of `POST /v1/screenshot` (spec section 2.1). Unknown fields are rejected. */
export class CreateScreenshotDto implements CaptureOptionsInput {
  @ApiProperty({
    description: 'Absolute http(s) URL of the page to capture; no user name, password or port 0',
    maxLength: CAPTURE_LIMITS.urlMaxLength,
    example: 'https://example.com',
  })
  @IsHttpUrl(CAPTURE_LIMITS.urlMaxLength)
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
