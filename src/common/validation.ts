import { ValidationPipe } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { ValidateBy, ValidationError, ValidationOptions } from 'class-validator';
import { z } from 'zod';
import { ApiError, FieldError } from './api-error';
import { assertAcceptableBody } from './request-body-rules';

/** A field path: `parent.name`, or `parent[3]` for an array index (CONTRACT.md, "Batches": `items[3].url`). */
function fieldPath(parent: string, segment: string | number): string {
  if (typeof segment === 'number' || /^\d+$/.test(segment)) return `${parent}[${segment}]`;
  return parent ? `${parent}.${segment}` : segment;
}

/**
 * Flattens class-validator errors into `details.fields` entries with paths such as `items[0].url`; a
 * {@link MatchesSchema} failure names the exact nested field (`clip.width`, `cookies[1].name`).
 */
export function toFieldErrors(errors: ValidationError[], parent = ''): FieldError[] {
  return errors.flatMap((e) => {
    const field = fieldPath(parent, e.property);
    const schema = e.constraints?.[MATCHES_SCHEMA] && e.target ? schemaOf(e.target, e.property) : undefined;
    const own = schema
      ? schemaIssues(schema, e.value).map((issue) => ({
          field: issue.path.reduce<string>((p, s) => fieldPath(p, String(s)), field),
          message: issue.message,
        }))
      : Object.values(e.constraints ?? {}).map((message) => ({ field, message }));
    return [...own, ...toFieldErrors(e.children ?? [], field)];
  });
}

const MATCHES_SCHEMA = 'matchesSchema';
const SCHEMA_METADATA = Symbol('matchesSchema');

function schemaOf(target: object, property: string): z.ZodType | undefined {
  return Reflect.getMetadata(SCHEMA_METADATA, target, property) as z.ZodType | undefined;
}

/**
 * The issues of `value` against `schema`. A value of the wrong type gets that one issue for its path:
 * zod also runs the length checks on it (a string has a `length`), which would name the field twice.
 */
function schemaIssues(schema: z.ZodType, value: unknown): { path: PropertyKey[]; message: string }[] {
  const result = schema.safeParse(value);
  if (result.success) return [];
  const key = (path: PropertyKey[]) => path.map(String).join('.');
  const wrongType = new Set(result.error.issues.filter((i) => i.code === 'invalid_type').map((i) => key(i.path)));
  return result.error.issues
    .filter((i) => i.code === 'invalid_type' || !wrongType.has(key(i.path)))
    .map((i) => ({ path: i.path, message: i.message }));
}

/**
 * Validates a property with a zod schema (the capture options' single source of rules, docs/ARCHITECTURE.md "Options, declared once"); a
 * failure becomes one `details.fields` entry per issue, named down to the nested field.
 */
export function MatchesSchema(schema: z.ZodType, options?: ValidationOptions): PropertyDecorator {
  return (target, property) => {
    Reflect.defineMetadata(SCHEMA_METADATA, schema, target, property);
    ValidateBy(
      {
        name: MATCHES_SCHEMA,
        validator: {
          validate: (value: unknown) => schema.safeParse(value).success,
          defaultMessage: (args) => schemaIssues(schema, args?.value)[0]?.message ?? 'is invalid',
        },
      },
      options,
    )(target, property as string);
  };
}

/** JSON Schema (2020-12, as OpenAPI 3.1 and MCP take it) of a zod schema, for `@ApiProperty` and tool inputs. */
export function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { target: 'draft-2020-12', unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  return rest;
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
    // Target and value let toFieldErrors name the nested field of a MatchesSchema failure; they never leave the server.
    validationError: { target: true, value: true },
    exceptionFactory: (errors) => ApiError.validation(toFieldErrors(errors)),
  });
}

/**
 * Why `value` is not an acceptable target URL, or null: it must be a string of at most `maxLength`
 * characters that WHATWG-parses (as the browser does) to an absolute `http:` or `https:` URL with a
 * host, a port other than 0 and no user name or password (credentials would reach logs and event
 * data; port 0 cannot be connected to).
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
 * stored and used later (webhook endpoints).
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
