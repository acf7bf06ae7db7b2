import { ValidationPipe } from '@nestjs/common';
import { ValidateBy, ValidationError, ValidationOptions } from 'class-validator';
import { ApiError, FieldError } from './api-error';

/** Flattens class-validator errors into `details.fields` entries named as in the body (`items[3].url`, `steps[0].selector`). */
export function toFieldErrors(errors: ValidationError[], parent = ''): FieldError[] {
  return errors.flatMap((e) => {
    const field = !parent ? e.property : /^\d+$/.test(e.property) ? `${parent}[${e.property}]` : `${parent}.${e.property}`;
    const own = Object.values(e.constraints ?? {}).map((message) => ({ field, message }));
    return [...own, ...toFieldErrors(e.children ?? [], field)];
  });
}

/** The global pipe: strict DTO validation (unknown fields rejected) failing with 400 `VALIDATION_FAILED`. */
export function createValidationPipe() {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    stopAtFirstError: true,
    exceptionFactory: (errors) => ApiError.validation(toFieldErrors(errors)),
  });
}

/**
 * Validates an absolute `http:` or `https:` URL (WHATWG parsing, as the browser does) of at most
 * `maxLength` characters.
 */
export function IsHttpUrl(maxLength: number, options?: ValidationOptions) {
  return ValidateBy(
    {
      name: 'isHttpUrl',
      validator: {
        validate(value: unknown) {
          if (typeof value !== 'string' || value.length > maxLength) return false;
          try {
            const url = new URL(value);
            return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
          } catch {
            return false;
          }
        },
        defaultMessage: () => `must be an absolute http or https URL of at most ${maxLength} characters`,
      },
    },
    options,
  );
}
