import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { CAPTURE_LIMITS, CAPTURE_OPTION_NAMES, type CaptureOptionName } from '../../capture/capture-options';
import { IsHttpUrl } from '../../common/validation';
import { RESULT_FORMATS, ResultFormat } from '../../results/result-formats';
import { captureOptionsDtoOf } from '../../screenshots/dto/create-screenshot.dto';
import { formTransformOf } from '../../screenshots/dto/upload-screenshot.dto';

/**
 * The formats a render link's extension names (CONTRACT.md, "Render links" and "Animated captures":
 * `.mp4`, `.webm`, `.gif`): every result format.
 */
export const RENDER_FORMATS = RESULT_FORMATS;
export type RenderFormat = ResultFormat;

/**
 * Capture options of `POST /v1/screenshot` a render link refuses, each with the reason its 400
 * `VALIDATION_FAILED` gives (CONTRACT.md, "Render links": except `format`, `cache` and `extract`; a link
 * answers with its image, so it delivers nowhere either).
 */
export const RENDER_LINK_REFUSED_OPTIONS: Partial<Record<CaptureOptionName, string>> = {
  format: 'is not a render link option: the extension of the link names the format',
  cache: 'is not a render link option: a render link always answers from the capture cache when it can',
  extract: 'is not a render link option: a render link answers with the image only',
  storage: 'is not a render link option: a render link answers with the image and delivers it nowhere',
  upload: 'is not a render link option: a render link answers with the image and delivers it nowhere',
};

/** Capture options a link may carry: those of `POST /v1/screenshot` except {@link RENDER_LINK_REFUSED_OPTIONS}. */
export const RENDER_LINK_OPTION_NAMES = CAPTURE_OPTION_NAMES.filter((name) => !(name in RENDER_LINK_REFUSED_OPTIONS));

/**
 * The options of a render link's query, as text converted like upload form fields (numbers,
 * `true`/`false`, JSON text for objects and arrays) and validated by the options table's rules, plus
 * `url`. Unknown parameters are rejected; `expires` and `signature` are taken out before.
 */
export class RenderLinkOptionsDto extends captureOptionsDtoOf(RENDER_LINK_OPTION_NAMES) {
  @ApiProperty({ description: 'Absolute http(s) URL of the page to capture', maxLength: CAPTURE_LIMITS.urlMaxLength })
  @IsHttpUrl(CAPTURE_LIMITS.urlMaxLength)
  url: string;
}

for (const name of RENDER_LINK_OPTION_NAMES) {
  const transform = formTransformOf(name);
  if (transform) Transform(transform)(RenderLinkOptionsDto.prototype, name);
}
