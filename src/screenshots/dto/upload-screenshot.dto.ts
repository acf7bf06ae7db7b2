import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import type { CaptureOptionsInput } from '../../capture/capture-options';
import type { ImageFormat } from '../../capture/image-format';
import { CaptureOption } from './create-screenshot.dto';

/** Largest uploaded HTML document, bytes (10 MiB: CONTRACT.md, "Rate limits and back-pressure"). */
export const UPLOAD_MAX_BYTES = 10 * 1024 * 1024;

/** Media types accepted for the uploaded document. */
export const UPLOAD_MEDIA_TYPES = ['text/html'];

/** A decimal integer form field becomes a number; anything else is left for the validator to reject. */
const formInt = ({ value }: { value: unknown }) => (typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value) : value);
/** `true`/`false` form fields become booleans; anything else is left for the validator to reject. */
const formBool = ({ value }: { value: unknown }) => (value === 'true' ? true : value === 'false' ? false : value);

/**
 * Form fields of `POST /v1/screenshot/upload` besides the `file` part: the capture options of
 * `POST /v1/screenshot` (same rules), sent as strings and converted explicitly. Unknown fields are rejected.
 */
export class UploadScreenshotDto implements CaptureOptionsInput {
  @CaptureOption.width()
  @Transform(formInt)
  width?: number;

  @CaptureOption.height()
  @Transform(formInt)
  height?: number;

  @CaptureOption.fullPage()
  @Transform(formBool)
  fullPage?: boolean;

  @CaptureOption.format()
  format?: ImageFormat;

  @CaptureOption.delay()
  @Transform(formInt)
  delay?: number;
}

/** The multipart form as documented in OpenAPI: the options plus the `file` part. */
export class UploadScreenshotFormDto extends UploadScreenshotDto {
  @ApiProperty({ type: 'string', format: 'binary', description: 'The HTML document (`text/html`, at most 10 MiB)' })
  file: unknown;
}
