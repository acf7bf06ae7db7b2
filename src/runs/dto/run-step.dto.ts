import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { plainToInstance } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateBy,
  ValidationArguments,
} from 'class-validator';
import { IMAGE_FORMATS, ImageFormat } from '../../results/result-formats';
import { IsHttpUrl } from '../../common/validation';
import { RUN_LIMITS, STEP_ACTIONS, StepAction } from '../run-steps';

const L = RUN_LIMITS;

const Selector = (description = 'CSS selector (Playwright syntax); the first match is used') =>
  applyDecorators(
    ApiProperty({ description, minLength: 1, maxLength: L.selectorMaxLength, example: '#submit' }),
    IsString(),
    Length(1, L.selectorMaxLength),
  );

const Action = (action: StepAction) => applyDecorators(ApiProperty({ enum: [action], description: 'The step' }), IsIn([action]));

/** Fields every step may have (CONTRACT.md, "Browser session runs"). */
export abstract class StepBaseDto {
  abstract action: StepAction;

  @ApiPropertyOptional({ description: 'When true, a failure of this step is recorded and the run goes on', default: false })
  @IsOptional()
  @IsBoolean()
  optional?: boolean;

  @ApiPropertyOptional({
    description: "This step's time limit in ms, within what is left of the run's `timeoutMs`",
    type: 'integer',
    minimum: L.stepTimeoutMs.min,
    maximum: L.stepTimeoutMs.max,
    default: L.stepTimeoutMs.default,
  })
  @IsOptional()
  @IsInt()
  @Min(L.stepTimeoutMs.min)
  @Max(L.stepTimeoutMs.max)
  timeoutMs?: number;
}

export class GotoStepDto extends StepBaseDto {
  @Action('goto') action: 'goto';
  @ApiProperty({ description: 'Absolute http(s) URL to load (until `load`); every request goes through the SSRF guard', maxLength: 2048 })
  @IsHttpUrl(2048)
  url: string;
}

export class ClickStepDto extends StepBaseDto {
  @Action('click') action: 'click';
  @Selector() selector: string;
}

export class FillStepDto extends StepBaseDto {
  @Action('fill') action: 'fill';
  @Selector() selector: string;
  @ApiProperty({ description: 'Text to put in the field (replaces its content)', maxLength: L.valueMaxLength })
  @IsString()
  @MaxLength(L.valueMaxLength)
  value: string;
  @ApiPropertyOptional({
    description:
      'The value is a secret (a password): it is never stored, logged, echoed in the run object, an idempotent replay or an event, ' +
      'and removed from every URL and message the run keeps. It can still be seen on the page if the field shows it (video, screenshots).',
    default: false,
  })
  @IsOptional()
  @IsBoolean()
  sensitive?: boolean;
}

export class PressStepDto extends StepBaseDto {
  @Action('press') action: 'press';
  @ApiProperty({
    description: 'Key or chord in Playwright notation (`Enter`, `Tab`, `Control+A`)',
    minLength: 1,
    maxLength: L.keyMaxLength,
    example: 'Enter',
  })
  @IsString()
  @Length(1, L.keyMaxLength)
  key: string;
  @ApiPropertyOptional({
    description: 'Element to focus first; without it the key goes to the focused element',
    maxLength: L.selectorMaxLength,
  })
  @IsOptional()
  @IsString()
  @Length(1, L.selectorMaxLength)
  selector?: string;
}

export class HoverStepDto extends StepBaseDto {
  @Action('hover') action: 'hover';
  @Selector() selector: string;
}

export class SelectStepDto extends StepBaseDto {
  @Action('select') action: 'select';
  @Selector('CSS selector of a `<select>`') selector: string;
  @ApiProperty({ description: 'Value or label of the option to select', maxLength: L.valueMaxLength })
  @IsString()
  @MaxLength(L.valueMaxLength)
  value: string;
}

export class CheckStepDto extends StepBaseDto {
  @Action('check') action: 'check';
  @Selector('CSS selector of a checkbox or radio button') selector: string;
}

export class UncheckStepDto extends StepBaseDto {
  @Action('uncheck') action: 'uncheck';
  @Selector('CSS selector of a checkbox') selector: string;
}

/** Exactly one of `selector` and `y` (checked on `selector`, so the error names it). */
function SelectorOrY() {
  return ValidateBy({
    name: 'selectorOrY',
    validator: {
      validate: (value: unknown, args?: ValidationArguments) => {
        const y = (args?.object as ScrollStepDto | undefined)?.y;
        if (value === undefined) return y !== undefined;
        return y === undefined && typeof value === 'string' && value.length >= 1 && value.length <= L.selectorMaxLength;
      },
      defaultMessage: (args?: ValidationArguments) =>
        args?.value === undefined || (args?.object as ScrollStepDto).y === undefined
          ? `give either selector (1-${L.selectorMaxLength} characters) or y`
          : 'give either selector or y, not both',
    },
  });
}

export class ScrollStepDto extends StepBaseDto {
  @Action('scroll') action: 'scroll';
  @ApiPropertyOptional({ description: 'Scroll this element into view (not with `y`)', maxLength: L.selectorMaxLength })
  @SelectorOrY()
  selector?: string;
  @ApiPropertyOptional({
    description: 'Scroll the page to this vertical offset in px (not with `selector`)',
    type: 'integer',
    minimum: 0,
    maximum: L.scrollYMax,
  })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(L.scrollYMax)
  y?: number;
}

export class WaitForSelectorStepDto extends StepBaseDto {
  @Action('waitForSelector') action: 'waitForSelector';
  @Selector('CSS selector of the element to wait for (until visible)') selector: string;
}

export class WaitForUrlStepDto extends StepBaseDto {
  @Action('waitForUrl') action: 'waitForUrl';
  @ApiProperty({
    description: 'Exact URL, or a glob (`**/welcome*`), the page must reach',
    minLength: 1,
    maxLength: 2048,
    example: '**/dashboard',
  })
  @IsString()
  @Length(1, 2048)
  url: string;
}

export class WaitStepDto extends StepBaseDto {
  @Action('wait') action: 'wait';
  @ApiProperty({ description: 'Milliseconds to wait', type: 'integer', minimum: L.waitMs.min, maximum: L.waitMs.max })
  @IsInt()
  @Min(L.waitMs.min)
  @Max(L.waitMs.max)
  ms: number;
}

export class EvaluateStepDto extends StepBaseDto {
  @Action('evaluate') action: 'evaluate';
  @ApiProperty({
    description:
      "JavaScript expression evaluated in the page (awaited when it is a promise); its JSON value (at most 10 KiB) is the step's `result`. " +
      'Refused (400) when the operator set `RUNS_ALLOW_EVALUATE=false`.',
    minLength: 1,
    maxLength: L.scriptMaxLength,
    example: 'document.querySelectorAll("li").length',
  })
  @IsString()
  @Length(1, L.scriptMaxLength)
  script: string;
}

export class ScreenshotStepDto extends StepBaseDto {
  @Action('screenshot') action: 'screenshot';
  @ApiPropertyOptional({
    description: 'Label of the screenshot (MCP shows it with the image)',
    maxLength: L.nameMaxLength,
    pattern: '^[A-Za-z0-9 _.-]+$',
  })
  @IsOptional()
  @IsString()
  @Length(1, L.nameMaxLength)
  @Matches(/^[A-Za-z0-9 _.-]+$/, { message: 'name may contain letters, digits, space, _ . -' })
  name?: string;
  @ApiPropertyOptional({ description: 'The whole page (height capped at 16,384 px) instead of the viewport', default: false })
  @IsOptional()
  @IsBoolean()
  fullPage?: boolean;
  @ApiPropertyOptional({
    description: 'Only the box of the first element matching this selector (not with `fullPage`)',
    maxLength: L.selectorMaxLength,
  })
  @IsOptional()
  @IsString()
  @Length(1, L.selectorMaxLength)
  selector?: string;
  @ApiPropertyOptional({ enum: IMAGE_FORMATS, default: 'png' })
  @IsOptional()
  @IsIn(IMAGE_FORMATS)
  format?: ImageFormat;
}

/** A step whose `action` is missing or unknown: only its `action` is kept, so the error names that field. */
export class UnknownStepDto {
  @IsIn(STEP_ACTIONS, { message: `action must be one of ${STEP_ACTIONS.join(', ')}` })
  action: unknown;
}

/** The class of each action (the discriminator mapping of the OpenAPI `oneOf`). */
export const STEP_DTOS = {
  goto: GotoStepDto,
  click: ClickStepDto,
  fill: FillStepDto,
  press: PressStepDto,
  hover: HoverStepDto,
  select: SelectStepDto,
  check: CheckStepDto,
  uncheck: UncheckStepDto,
  scroll: ScrollStepDto,
  waitForSelector: WaitForSelectorStepDto,
  waitForUrl: WaitForUrlStepDto,
  wait: WaitStepDto,
  evaluate: EvaluateStepDto,
  screenshot: ScreenshotStepDto,
} as const satisfies Record<StepAction, new () => StepBaseDto>;

export type RunStepDto = InstanceType<(typeof STEP_DTOS)[StepAction]>;

/**
 * class-transformer hook of `steps`: each item becomes an instance of its action's class (so the
 * global pipe validates it and rejects unknown fields), or an {@link UnknownStepDto}.
 */
export function toStepInstances({ value }: { value: unknown }): unknown {
  if (!Array.isArray(value)) return value;
  return value.map((item) => {
    const action = item && typeof item === 'object' ? (item as { action?: unknown }).action : undefined;
    if (typeof action === 'string' && Object.prototype.hasOwnProperty.call(STEP_DTOS, action)) {
      return plainToInstance(STEP_DTOS[action as StepAction] as new () => object, item);
    }
    return Object.assign(new UnknownStepDto(), { action });
  });
}

/** OpenAPI schema of one step: a `oneOf` of the action classes, discriminated on `action`. */
export const STEP_SCHEMA = {
  oneOf: Object.values(STEP_DTOS).map((dto) => ({ $ref: getSchemaPath(dto) })),
  discriminator: {
    propertyName: 'action',
    mapping: Object.fromEntries(Object.entries(STEP_DTOS).map(([action, dto]) => [action, getSchemaPath(dto)])),
  },
};
