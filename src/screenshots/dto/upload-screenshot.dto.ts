import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { captureOptionJsonSchema, CaptureOptionName, UPLOAD_OPTION_NAMES } from '../../capture/capture-options';
import { captureOptionsDtoOf } from './create-screenshot.dto';

/** Largest uploaded HTML document, bytes (10 MiB: CONTRACT.md, "Rate limits and back-pressure"). */
export const UPLOAD_MAX_BYTES = 10 * 1024 * 1024;

/** Media types accepted for the uploaded document. */
export const UPLOAD_MEDIA_TYPES = ['text/html'];

/** Largest form field, bytes: `css` and `javascript` are up to 65,536 characters of UTF-8. */
export const UPLOAD_FIELD_MAX_BYTES = 4 * 65_536;

export type FormTransform = (params: { value: unknown }) => unknown;

/** A decimal integer form field becomes a number; anything else is left for the validator to reject. */
const formInt: FormTransform = ({ value }) => (typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value) : value);
/** A decimal number form field becomes a number. */
const formNumber: FormTransform = ({ value }) =>
  typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value.trim()) ? Number(value) : value;
/** `true`/`false` form fields become booleans; anything else is left for the validator to reject. */
const formBool: FormTransform = ({ value }) => (value === 'true' ? true : value === 'false' ? false : value);
/** An object or array option arrives as JSON text (CONTRACT.md, "Capture options"); text that is not JSON is left for the validator to reject. */
const formJson: FormTransform = ({ value }) => {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
};

/** How a form field's text becomes the option's value, from the option's JSON Schema type. */
export function formTransformOf(name: CaptureOptionName): FormTransform | null {
  const type = captureOptionJsonSchema(name).type;
  if (type === 'integer') return formInt;
  if (type === 'number') return formNumber;
  if (type === 'boolean') return formBool;
  if (type === 'object' || type === 'array') return formJson;
  return null;
}

/**
 * Form fields of `POST /v1/screenshot/upload` besides the `file` part: the capture options of
 * `POST /v1/screenshot` (same rules) but those an uploaded document cannot use (`profile`,
 * `profileCheck`: {@link UPLOAD_OPTION_NAMES}), sent as strings and converted explicitly (numbers, `true`/`false`,
 * JSON text for objects and arrays). Unknown fields are rejected.
 */
export class UploadScreenshotDto extends captureOptionsDtoOf(UPLOAD_OPTION_NAMES) {}

for (const name of UPLOAD_OPTION_NAMES) {
  const transform = formTransformOf(name);
  if (transform) Transform(transform)(UploadScreenshotDto.prototype, name);
}

/** Form fields the upload route accepts: its capture options plus `file`. */
export const UPLOAD_FORM_FIELDS_MAX = UPLOAD_OPTION_NAMES.length;

/** The multipart form as documented in OpenAPI: the options plus the `file` part. */
export class UploadScreenshotFormDto extends UploadScreenshotDto {
  @ApiProperty({ type: 'string', format: 'binary', description: 'The HTML document (`text/html`, at most 10 MiB)' })
  file: unknown;
}
