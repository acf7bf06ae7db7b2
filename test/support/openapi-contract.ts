import Ajv2020, { ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/* Validation of real responses against the committed OpenAPI document (test/contract.e2e-spec.ts). */

export const OPENAPI_PATH = join(__dirname, '..', '..', 'openapi', 'openapi.json');

export type Json = any;
export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;

/** One operation of the document. */
export interface DocOperation {
  operationId: string;
  method: string;
  path: string;
  operation: Json;
  /** Path-level and operation-level parameters, references resolved. */
  parameters: Json[];
}

/** A response as received: status, headers and the raw body text. */
export interface ReceivedResponse {
  status: number;
  headers: Headers;
  text: string;
}

/** The committed document, parsed. */
export function loadCommittedDocument(): Json {
  return JSON.parse(readFileSync(OPENAPI_PATH, 'utf8'));
}

/** Resolves a local `$ref` (`#/components/...`) against `doc`, following chains. */
export function resolveRef(doc: Json, value: Json): Json {
  let current = value;
  for (let hops = 0; current && typeof current === 'object' && typeof current.$ref === 'string'; hops++) {
    if (hops > 20 || !current.$ref.startsWith('#/')) throw new Error(`cannot resolve ${current.$ref}`);
    current = current.$ref
      .slice(2)
      .split('/')
      .map((p: string) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce((node: Json, key: string) => node?.[key], doc);
    if (current === undefined) throw new Error(`unresolved reference ${value.$ref}`);
  }
  return current;
}

/**
 * The properties of an object schema: its own and those of the schemas its `allOf` members are or refer
 * to (the capture options are stated once, as `CaptureOptions` and `SessionOptions`, and the bodies that
 * take them refer to those), without the ones set to `false` (refused in that body).
 */
export function propertiesOf(doc: Json, schema: Json): Record<string, Json> {
  const resolved = resolveRef(doc, schema ?? {});
  const out: Record<string, Json> = {};
  for (const member of resolved.allOf ?? []) Object.assign(out, propertiesOf(doc, member));
  Object.assign(out, resolved.properties ?? {});
  for (const [name, property] of Object.entries(out)) if (property === false) delete out[name];
  return out;
}

/** Every operation under `paths`, in document order. */
export function operationsOf(doc: Json): DocOperation[] {
  const out: DocOperation[] = [];
  for (const [path, item] of Object.entries<Json>(doc.paths ?? {})) {
    for (const method of HTTP_METHODS) {
      const operation = item[method];
      if (!operation) continue;
      const parameters = [...(item.parameters ?? []), ...(operation.parameters ?? [])].map((p) => resolveRef(doc, p));
      out.push({ operationId: operation.operationId, method, path, operation, parameters });
    }
  }
  return out;
}

/**
 * The names of the component schemas that some `allOf` refers to (`CaptureOptions`, `SessionOptions`):
 * bases that the schemas referring to them close, so they stay open themselves.
 */
function allOfBases(doc: Json): Set<string> {
  const bases = new Set<string>();
  const visit = (node: Json): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (!node || typeof node !== 'object') return;
    for (const member of Array.isArray(node.allOf) ? node.allOf : [])
      if (typeof member?.$ref === 'string') bases.add(member.$ref.replace('#/components/schemas/', ''));
    Object.values(node).forEach(visit);
  };
  visit(doc.components ?? {});
  return bases;
}

/** {@link closeObjects} of the document's components, the schemas of {@link allOfBases} left open at their top. */
function closeComponents(doc: Json): Json {
  const bases = allOfBases(doc);
  const closed = closeObjects({ components: doc.components });
  for (const name of bases) {
    const schema = closed.components?.schemas?.[name];
    if (schema && !doc.components.schemas[name].unevaluatedProperties) delete schema.unevaluatedProperties;
  }
  return closed;
}

/**
 * A copy of `schema` in which objects reject undocumented fields: `unevaluatedProperties: false` on every
 * schema with `properties` or `allOf` that does not state `additionalProperties` itself (allOf members
 * are left open; the schema holding the allOf closes them all).
 */
function closeObjects(schema: Json, inAllOf = false): Json {
  if (Array.isArray(schema)) return schema.map((s) => closeObjects(s));
  if (!schema || typeof schema !== 'object') return schema;
  const out: Json = {};
  for (const [key, value] of Object.entries<Json>(schema)) {
    if (key === 'allOf') out.allOf = value.map((member: Json) => closeObjects(member, true));
    else if (key === 'properties') out.properties = Object.fromEntries(Object.entries<Json>(value).map(([k, v]) => [k, closeObjects(v)]));
    else if (key === 'example' || key === 'examples') out[key] = value;
    else if (key === 'oneOf' || key === 'anyOf') out[key] = value.map((member: Json) => closeObjects(member, true));
    else out[key] = closeObjects(value);
  }
  const isObjectSchema = out.properties !== undefined || out.allOf !== undefined;
  if (isObjectSchema && !inAllOf && out.additionalProperties === undefined && out.unevaluatedProperties === undefined) {
    out.unevaluatedProperties = false;
  }
  return out;
}

/**
 * Validates responses against one OpenAPI 3.1 document with ajv (JSON Schema 2020-12 + formats).
 * Strict about what the server adds: an undocumented status, an undocumented service header
 * (`X-*`, or any header name the document declares somewhere) or an undocumented body field fails.
 */
export class ContractValidator {
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<string, ValidateFunction>();
  /** Lower-case names of every response header declared anywhere in the document. */
  private readonly declaredHeaderNames: Set<string>;
  /** Responses validated so far. */
  validated = 0;

  constructor(readonly doc: Json) {
    this.ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(this.ajv);
    this.ajv.addSchema({ ...closeComponents(doc), $id: 'openapi.json' });
    this.declaredHeaderNames = new Set<string>(Object.keys(doc.components?.headers ?? {}).map((h) => h.toLowerCase()));
    for (const op of operationsOf(doc)) {
      for (const response of Object.values<Json>(op.operation.responses ?? {})) {
        for (const name of Object.keys(resolveRef(doc, response).headers ?? {})) this.declaredHeaderNames.add(name.toLowerCase());
      }
    }
  }

  /** A validator for `schema`, whose `#/components/...` references point into the document. */
  schemaValidator(key: string, schema: Json): ValidateFunction {
    let fn = this.compiled.get(key);
    if (!fn) {
      const rebased = JSON.parse(JSON.stringify(closeObjects(schema)).replace(/"#\/components\//g, '"openapi.json#/components/'));
      fn = this.ajv.compile(rebased);
      this.compiled.set(key, fn);
    }
    return fn;
  }

  /**
   * Checks `res` against the documented response of `op` for its status and returns the problems
   * (empty when it conforms). Counts the response as validated.
   */
  problems(op: DocOperation, res: ReceivedResponse): string[] {
    this.validated++;
    const problems: string[] = [];
    const responses = op.operation.responses ?? {};
    const documented = responses[String(res.status)] ?? responses[`${String(res.status)[0]}XX`] ?? responses.default;
    if (!documented) return [`status ${res.status} is not documented (documented: ${Object.keys(responses).join(', ')})`];
    const response = resolveRef(this.doc, documented);

    // Headers: every required one present and each present documented one valid; no undocumented service header.
    const declared = new Map<string, Json>(
      Object.entries<Json>(response.headers ?? {}).map(([n, h]) => [n.toLowerCase(), resolveRef(this.doc, h)]),
    );
    for (const [name, header] of declared) {
      const value = res.headers.get(name);
      if (value === null) {
        if (header.required) problems.push(`required header ${name} missing`);
        continue;
      }
      const schema = header.schema ?? {};
      const typed = (schema.type === 'integer' || schema.type === 'number') && /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value;
      const validate = this.schemaValidator(`header:${JSON.stringify(schema)}`, schema);
      if (!validate(typed)) problems.push(`header ${name}: ${JSON.stringify(value)} ${this.ajv.errorsText(validate.errors)}`);
    }
    res.headers.forEach((_value, name) => {
      const lower = name.toLowerCase();
      if ((lower.startsWith('x-') || this.declaredHeaderNames.has(lower)) && !declared.has(lower)) {
        problems.push(`header ${name} is not documented for ${res.status}`);
      }
    });

    // Body: the documented media type and schema, or nothing.
    const content = response.content ?? {};
    const mediaTypes = Object.keys(content);
    if (mediaTypes.length === 0) {
      if (res.text.length > 0) problems.push(`status ${res.status} documents no body, got ${JSON.stringify(res.text.slice(0, 200))}`);
      return problems;
    }
    const contentType = (res.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
    if (!mediaTypes.includes(contentType)) {
      problems.push(`content-type ${JSON.stringify(contentType)} is not documented (${mediaTypes.join(', ')})`);
      return problems;
    }
    if (contentType !== 'application/json') return problems;
    let body: Json;
    try {
      body = JSON.parse(res.text);
    } catch {
      return [...problems, `body is not JSON: ${JSON.stringify(res.text.slice(0, 200))}`];
    }
    const schema = content[contentType].schema ?? {};
    const validate = this.schemaValidator(`${op.operationId}:${res.status}:${contentType}`, schema);
    if (!validate(body)) {
      problems.push(`body ${JSON.stringify(body).slice(0, 400)} does not match the schema: ${this.ajv.errorsText(validate.errors)}`);
    }
    return problems;
  }
}
