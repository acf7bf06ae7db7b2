/*
 * Pure transformations of an OpenAPI document into its committed form: OpenAPI 3.1 schemas and a
 * deterministic key and list order, so an unrelated code change never reorders the file.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Rewrites OpenAPI 3.0 `nullable: true` (as emitted by @nestjs/swagger) into OpenAPI 3.1 / JSON Schema:
 * `{ type: 'string', nullable: true }` → `{ type: ['string', 'null'] }` (with `null` added to an `enum`),
 * and a nullable `$ref`/`allOf` schema → `{ oneOf: [schema, { type: 'null' }] }`. Returns a new value.
 */
export function toOpenApi31Schemas<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item) => toOpenApi31Schemas(item)) as T;
  if (!isObject(value)) return value;
  const out: JsonObject = {};
  for (const [key, child] of Object.entries(value)) out[key] = toOpenApi31Schemas(child);
  if (out.nullable === true) {
    delete out.nullable;
    if (typeof out.type === 'string') {
      out.type = [out.type, 'null'];
      if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
    } else {
      const { description, ...schema } = out;
      return { ...(description !== undefined ? { description } : {}), oneOf: [schema, { type: 'null' }] } as T;
    }
  } else if (out.nullable === false) {
    delete out.nullable;
  }
  return out as T;
}

/** Top-level keys in their conventional order; everything below the top level is sorted by key. */
const TOP_LEVEL_ORDER = [
  'openapi',
  'info',
  'jsonSchemaDialect',
  'servers',
  'security',
  'tags',
  'externalDocs',
  'paths',
  'webhooks',
  'components',
];

/** Keys whose array value is a set and is sorted: by `in`+`name` (parameters), `name` (tags) or value. */
const SET_ARRAYS = new Set(['required', 'tags', 'parameters']);

function sortKey(item: Json): string {
  if (isObject(item)) {
    if (typeof item.$ref === 'string') return `~${item.$ref}`;
    return `${String(item.in ?? '')}:${String(item.name ?? JSON.stringify(item))}`;
  }
  return String(item);
}

function canonical(value: Json, parentKey: string | undefined): Json {
  if (Array.isArray(value)) {
    const items = value.map((item) => canonical(item, undefined));
    if (parentKey && SET_ARRAYS.has(parentKey)) {
      // Parameters as objects sort by location then name; $refs (shared parameters) after inline ones.
      return [...items].sort((a, b) => (sortKey(a) < sortKey(b) ? -1 : sortKey(a) > sortKey(b) ? 1 : 0));
    }
    return items;
  }
  if (!isObject(value)) return value;
  const out: JsonObject = {};
  for (const key of Object.keys(value).sort()) out[key] = canonical(value[key], key);
  return out;
}

/**
 * The canonical form of `doc`: keys sorted everywhere (top-level keys in the conventional order),
 * `required`, `tags` and `parameters` lists sorted; other arrays (enums, examples, allOf) keep their
 * order, which carries meaning. Empty `tags`/`servers` arrays and empty `contact` are dropped.
 */
export function canonicalizeDocument<T extends object>(doc: T): T {
  const sorted = canonical(doc as unknown as Json, undefined) as JsonObject;
  const info = sorted.info;
  if (isObject(info) && isObject(info.contact) && Object.keys(info.contact).length === 0) delete info.contact;
  const out: JsonObject = {};
  for (const key of TOP_LEVEL_ORDER) {
    const child = sorted[key];
    if (child === undefined || (Array.isArray(child) && child.length === 0)) continue;
    out[key] = child;
  }
  for (const key of Object.keys(sorted)) if (!(key in out) && !TOP_LEVEL_ORDER.includes(key)) out[key] = sorted[key];
  return out as unknown as T;
}

/** The bytes of the committed file: two-space JSON with a trailing newline. */
export function serializeDocument(doc: object): string {
  return `${JSON.stringify(doc, null, 2)}\n`;
}
