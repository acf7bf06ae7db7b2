import { z } from 'zod';
import {
  CAPTURE_OPTION_NAMES,
  CaptureOptionName,
  captureOptionSpec,
  CAPTURE_OPTION_TABLE,
  SessionOptionName,
} from './capture-options-table';

/**
 * What is derived from the options table for the outside: the public schema of each option with its
 * doc, default and example (REST DTOs, OpenAPI, MCP arguments, upload form fields, and through the
 * OpenAPI document the SDK CLI's flags), the input types, and the resolved {@link CaptureOptions} and
 * {@link SessionOptions} types (CONTRACT.md, "Capture options"; docs/capture-options.md).
 */

type Table = typeof CAPTURE_OPTION_TABLE;

/**
 * The public schema of every option with its doc, default and example as JSON Schema annotations:
 * the REST validation and OpenAPI properties (`CaptureOption` decorators, `MatchesSchema`), the MCP
 * arguments and {@link CaptureOptionsInput} come from it.
 */
export const CAPTURE_OPTION_FIELDS = Object.fromEntries(
  CAPTURE_OPTION_NAMES.map((name) => {
    const spec = captureOptionSpec(name);
    return [
      name,
      spec.schema.meta({ description: spec.doc, ...(spec.default !== undefined ? { default: spec.default } : {}), example: spec.example }),
    ];
  }),
) as { readonly [K in CaptureOptionName]: Table[K]['schema'] };

/** The options as a customer sends them (REST body, upload form fields, MCP arguments, batch items), all optional. */
export type CaptureOptionsInput = { [K in CaptureOptionName]?: z.output<Table[K]['schema']> };

/** The session options as a customer sends them (run bodies). */
export type SessionOptionsInput = Pick<CaptureOptionsInput, SessionOptionName>;

/** Each option's JSON Schema, converted once (the DTOs, the upload form, the OpenAPI document and the MCP tools all ask). */
const jsonSchemas = new Map<CaptureOptionName, Record<string, unknown>>();

/**
 * JSON Schema (2020-12, OpenAPI 3.1 and MCP `inputSchema` alike) of one option, with its description,
 * default and example: a copy of its own, which the caller may change.
 */
export function captureOptionJsonSchema(name: CaptureOptionName): Record<string, unknown> {
  let schema = jsonSchemas.get(name);
  if (!schema) {
    const { $schema: _ignored, ...converted } = z.toJSONSchema(CAPTURE_OPTION_FIELDS[name], {
      target: 'draft-2020-12',
      unrepresentable: 'any',
    }) as Record<string, unknown>;
    schema = converted;
    jsonSchemas.set(name, schema);
  }
  return structuredClone(schema);
}

/** An entry's resolved value: what its `resolve` returns, else its output type (null when it has no default). */
type ResolvedValue<E> = E extends { resolve: (...args: never[]) => infer R }
  ? R
  : E extends { schema: infer S extends z.ZodType; default: unknown }
    ? z.output<S>
    : E extends { schema: infer S extends z.ZodType }
      ? z.output<S> | null
      : never;

/** An entry's resolved name: `resolvedAs`, else its public name. */
type ResolvedName<K extends string, E> = E extends { resolvedAs: infer A extends string } ? A : K;

/** What a `device` implies beyond the options of the table (Playwright's descriptor). */
export interface DeviceTraits {
  /** Mobile meta-viewport. */
  isMobile: boolean;
  /** Touch events. */
  hasTouch: boolean;
}

/**
 * The options of one capture with every default applied, derived from the table: each option under
 * its resolved name (`delay` → `delayMs` ms, `cacheTtl` → `cacheTtlS` s) plus the device's traits.
 * Sizes in CSS px.
 */
export type CaptureOptions = { -readonly [K in CaptureOptionName as ResolvedName<K, Table[K]>]: ResolvedValue<Table[K]> } & DeviceTraits;

/**
 * The options of a browser session, shared by captures and browser session runs (CONTRACT.md,
 * "Browser session runs": the session options): the session options resolved, plus the device's traits.
 */
export type SessionOptions = { -readonly [K in SessionOptionName as ResolvedName<K, Table[K]>]: ResolvedValue<Table[K]> } & DeviceTraits;
