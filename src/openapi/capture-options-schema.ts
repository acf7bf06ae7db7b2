import { isDeepStrictEqual } from 'node:util';
import type { OpenAPIObject } from '@nestjs/swagger';
import {
  CAPTURE_OPTION_NAMES,
  captureOptionJsonSchema,
  CaptureOptionName,
  SESSION_OPTION_NAMES,
  SessionOptionName,
} from '../capture/capture-options';
import { toOpenApi31Schemas } from './canonical-document';

/** The name of the one schema of the capture options in the OpenAPI document (`#/components/schemas/CaptureOptions`). */
export const CAPTURE_OPTIONS_SCHEMA = 'CaptureOptions';
/** The name of the schema of the session options, the part of the capture options runs take (`#/components/schemas/SessionOptions`). */
export const SESSION_OPTIONS_SCHEMA = 'SessionOptions';

const CAPTURE_DESCRIPTION =
  'The capture options (docs/CONTRACT.md, "Capture options"), stated once: the session options (`SessionOptions`) and the others. ' +
  'Every body that takes them refers to this schema (`POST /v1/screenshot` and its batch items, the upload form, monitors, the job’s ' +
  '`options`); a body that does not take one of them lists it as `false`. In the upload form, numbers and booleans are text and ' +
  'objects and arrays JSON text.';
const SESSION_DESCRIPTION =
  'The session options: the capture options that set up the browser session (viewport, device, headers, cookies, blocking, …), ' +
  'taken by captures and by `POST /v1/runs` (docs/capture-options.md).';

type SchemaNode = Record<string, unknown>;
const isNode = (value: unknown): value is SchemaNode => typeof value === 'object' && value !== null && !Array.isArray(value);

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/**
 * The schemas of the options, each option stated once, as {@link captureOptionJsonSchema} gives it (the
 * options table, `src/capture/capture-options.ts`): {@link SESSION_OPTIONS_SCHEMA} with the session
 * options, and {@link CAPTURE_OPTIONS_SCHEMA}, which refers to it and adds the other options. Every
 * property is optional.
 */
export function optionSchemas(): Record<string, SchemaNode> {
  const propertiesOf = (names: readonly CaptureOptionName[]) =>
    Object.fromEntries(names.map((name) => [name, captureOptionJsonSchema(name)]));
  return toOpenApi31Schemas({
    [SESSION_OPTIONS_SCHEMA]: { type: 'object', description: SESSION_DESCRIPTION, properties: propertiesOf(SESSION_OPTION_NAMES) },
    [CAPTURE_OPTIONS_SCHEMA]: {
      type: 'object',
      description: CAPTURE_DESCRIPTION,
      allOf: [ref(SESSION_OPTIONS_SCHEMA)],
      properties: propertiesOf(CAPTURE_OPTION_NAMES.filter((name) => !SESSION_OPTION_NAMES.includes(name as SessionOptionName))),
    },
  });
}

/** Object schemas nested in `node` (properties, items, compositions), `node` first. */
function* objectSchemas(node: unknown): Generator<SchemaNode> {
  if (!isNode(node)) return;
  yield node;
  if (isNode(node.properties)) for (const child of Object.values(node.properties)) yield* objectSchemas(child);
  yield* objectSchemas(node.items);
  for (const key of ['allOf', 'oneOf', 'anyOf'])
    if (Array.isArray(node[key])) for (const child of node[key] as unknown[]) yield* objectSchemas(child);
}

/**
 * Whether `property` is the option's schema `shared`: equal, but for the list of `required` members of an
 * object option, which @nestjs/swagger replaces by its own boolean `required` on DTO properties (the
 * shared schema has the list, as the options table says).
 */
function sameOption(property: unknown, shared: SchemaNode): boolean {
  if (isDeepStrictEqual(property, shared) || !isNode(property)) return isDeepStrictEqual(property, shared);
  const { required: _dto, ...rest } = property;
  const { required: _table, ...sharedRest } = shared;
  return isDeepStrictEqual(rest, sharedRest);
}

/**
 * Adds {@link SESSION_OPTIONS_SCHEMA} and {@link CAPTURE_OPTIONS_SCHEMA} to `doc` and replaces, in every
 * schema of `doc` (components and what they nest) that states options inline, those properties by a
 * reference (`allOf: [{ $ref }]`), so the document states each option once and a client generator
 * derives one type: the capture options when the schema has at least half of them, else the session
 * options when it has at least half of those and no other option, each property equal to the shared one.
 * The options of the referenced set a schema lacks become `false` (refused there, as monitors refuse
 * `pdf`), and an `additionalProperties: false` becomes `unevaluatedProperties: false` (which sees the
 * referenced properties). Changes `doc` in place; validation is untouched (the DTOs still validate
 * each field, docs/capture-options.md).
 */
export function referenceCaptureOptions(doc: OpenAPIObject): void {
  doc.components ??= {};
  const schemas = (doc.components.schemas ??= {}) as Record<string, unknown>;
  const shared = Object.fromEntries(CAPTURE_OPTION_NAMES.map((name) => [name, captureOptionJsonSchema(name)]));
  const sets: [string, readonly CaptureOptionName[]][] = [
    [CAPTURE_OPTIONS_SCHEMA, CAPTURE_OPTION_NAMES],
    [SESSION_OPTIONS_SCHEMA, SESSION_OPTION_NAMES],
  ];
  for (const schema of Object.values(schemas)) {
    for (const node of [...objectSchemas(schema)]) {
      const properties = node.properties;
      if (!isNode(properties)) continue;
      const present = CAPTURE_OPTION_NAMES.filter((option) => option in properties);
      if (present.some((option) => !sameOption(properties[option], toOpenApi31Schemas(shared[option])))) continue;
      const set = sets.find(([, names]) => present.every((option) => names.includes(option)) && present.length * 2 >= names.length);
      if (!set) continue;
      const [name, names] = set;
      for (const option of names) {
        if (present.includes(option)) delete properties[option];
        else properties[option] = false;
      }
      if (Object.keys(properties).length === 0) delete node.properties;
      node.allOf = [ref(name), ...((node.allOf as unknown[] | undefined) ?? [])];
      if (node.additionalProperties === false) {
        delete node.additionalProperties;
        node.unevaluatedProperties = false;
      }
    }
  }
  Object.assign(schemas, optionSchemas());
}
