import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { CAPTURE_LIMITS, CAPTURE_OPTION_NAMES } from '../../capture/capture-options';
import { IsHttpUrl } from '../../common/validation';
import { captureOptionsDtoOf } from '../../screenshots/dto/create-screenshot.dto';
import { formTransformOf } from '../../screenshots/dto/upload-screenshot.dto';

/** The formats a render link's extension names (CONTRACT.md, "Render links"). */
export const RENDER_FORMATS = ['png', 'jpeg', 'webp', 'pdf'] as const;
export type RenderFormat = (typeof RENDER_FORMATS)[number];

/**
 * Capture options a link may carry: those of `POST /v1/screenshot` except `format` (the extension),
 * `cache` (always on), and `storage` / `upload` (a link serves its image; it delivers nowhere).
 */
export const RENDER_LINK_OPTION_NAMES = CAPTURE_OPTION_NAMES.filter((name) => !['format', 'cache', 'storage', 'upload'].includes(name));

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
