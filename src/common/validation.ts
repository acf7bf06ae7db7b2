import { ValidationPipe } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { ValidateBy, ValidationError, ValidationOptions } from 'class-validator';
import { ApiError, FieldError } from './api-error';
import { assertAcceptableBody } from './request-body-rules';

/** Flattens class-validator errors into `details.fields` entries with dotted paths (`items.0.url`). */
export function toFieldErrors(errors: ValidationError[], parent = ''): FieldError[] {
  return errors.flatMap((e) => {
    const field = parent ? `${parent}.${e.property}` : e.property;
    const own = Object.values(e.constraints ?? {}).map((message) => ({ field, message }));
    return [...own, ...toFieldErrors(e.children ?? [], field)];
  });
}

/**
 * Nest's ValidationPipe, except that reserved keys (`__proto__`, `constructor`, `prototype`) are refused
 * instead of silently stripped, and nesting and NUL characters are checked first
 * ({@link assertAcceptableBody}): multipart form fields and query parameters reach DTOs without the
 * JSON body checks of `body-parsing.ts`. Throws 400 `VALIDATION_FAILED` (or `INVALID_JSON` for nesting).
 */
class StrictValidationPipe extends ValidationPipe {
  protected override stripProtoKeys(value: unknown): void {
    assertAcceptableBody(value);
  }
}

/** The global pipe: strict DTO validation (unknown and reserved fields rejected) failing with 400 `VALIDATION_FAILED`. */
export function createValidationPipe() {
  return new StrictValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    stopAtFirstError: true,
    exceptionFactory: (errors) => ApiError.validation(toFieldErrors(errors)),
  });
}

/**
 * Why `value` is not an acceptable target URL, or null: it must be a string of at most `maxLength`
 * characters that WHATWG-parses (as the browser does) to an absolute `http:` or `https:` URL with a
 * host, a port other than 0 and no user name or password (issue 16: credentials would reach logs and
 * event data; port 0 cannot be connected to).
 */
export function httpUrlProblem(value: unknown, maxLength: number): string | null {
  const rule = `must be an absolute http or https URL of at most ${maxLength} characters`;
  if (typeof value !== 'string' || value.length > maxLength) return rule;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return rule;
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') return rule;
  if (url.username || url.password) return 'must not contain a user name or password';
  if (url.port === '0') return 'must not use port 0';
  return null;
}

/** Validates a target URL with {@link httpUrlProblem}; the message says which rule failed. */
export function IsHttpUrl(maxLength: number, options?: ValidationOptions) {
  return ValidateBy(
    {
      name: 'isHttpUrl',
      validator: {
        validate: (value: unknown) => httpUrlProblem(value, maxLength) === null,
        defaultMessage: (args) => httpUrlProblem(args?.value, maxLength) ?? 'must be an absolute http or https URL',
      },
    },
    options,
  );
}

/**
 * Replaces a URL string by its WHATWG serialization (`new URL(v).href`): tabs and line breaks removed,
 * backslashes turned into slashes, host lower-cased and punycoded, default port dropped. What cannot be
 * parsed is left as it is for the validator to refuse. Use with {@link IsHttpUrl} on URLs that are
 * stored and used later (webhook endpoints, issue 16).
 */
export function NormalizeUrl() {
  return Transform(({ value }: { value: unknown }) => {
    if (typeof value !== 'string') return value;
    try {
      return new URL(value).href;
    } catch {
      return value;
    }
  });
}
