import { HostResolver } from '../../src/egress/host-resolver';
import { DocOperation, Json, loadCommittedDocument, operationsOf, propertiesOf, resolveRef } from '../support/openapi-contract';
import { multipartBody, rawRequest, RawResponse } from '../support/raw-http';
import { startTestApp, TestApp } from '../support/test-app';

/*
 * Schema-driven fuzz test: walks the committed openapi/openapi.json and, for every
 * operation, sends its valid request and then hostile variants of it: each body field (nested ones
 * included) with wrong types, null, empty and 1 MB strings, NUL, invalid UTF-8, deep nesting and
 * reserved keys; the body as a whole duplicated, reserved-keyed, non-object, unparsable, nested
 * 10,000 deep, invalid UTF-8, over the size limit and under the wrong Content-Type or charset; every
 * path id badly percent-encoded or of the wrong shape; every query parameter mistyped; every `url`
 * field spelled as a loopback address (the SSRF guard is on, so they are refused and nothing is
 * fetched). Every answer must be a 2xx, or a 4xx in the error envelope with the X-Request-ID as
 * requestId: never a 5xx, never a hang. Operations added to the document later are fuzzed without
 * any change here. No capture runs (processors off) and no name is resolved (a stub resolver), so no
 * request leaves the machine.
 */

/** A value every `url` field gets in valid requests: a reserved name (RFC 6761) that never resolves. */
const VALID_URL = 'https://fuzz.invalid/page';
/** Loopback spellings the SSRF guard must refuse (end to end only loopback targets, never others). */
const SSRF_URLS = [
  'http://127.0.0.1/',
  'http://[::ffff:127.0.0.1]/',
  'http://2130706433/',
  'http://localhost/',
  'http://0x7f.1/',
  'http://127.1:3000/',
  'http://[::1]/',
  'http://LOCALHOST./',
  'file:///etc/passwd',
  'javascript:alert(1)',
];
const ONE_MB = 'a'.repeat(1_000_000);
const DEEP = (n: number) => '['.repeat(n) + ']'.repeat(n);
/** A JSON string literal whose content is not valid UTF-8. */
const INVALID_UTF8_STRING = Buffer.concat([Buffer.from('"a'), Buffer.from([0xff, 0xc3, 0x28]), Buffer.from('b"')]);
const REQUEST_TIMEOUT_MS = 10_000;
const CONCURRENCY = 6;

/** One request of the fuzz run. `body` is raw bytes; `expect4xx` marks variants that must be refused. */
interface FuzzCase {
  name: string;
  path: string;
  query?: string;
  body?: Buffer | string;
  contentType?: string;
  headers?: Record<string, string>;
  expect4xx?: boolean;
}

describe('fuzz: every operation of openapi/openapi.json against hostile input', () => {
  let t: TestApp;
  let key: string;
  const doc = loadCommittedDocument();
  const operations = operationsOf(doc);
  const counts = new Map<string, { requests: number; status2xx: number; status4xx: number; status5xx: number; ms?: number }>();
  const failures: string[] = [];

  beforeAll(async () => {
    t = await startTestApp({
      runProcessors: false,
      env: { SSRF_ALLOW_PRIVATE: 'false', WEBHOOK_ALLOW_HTTP: 'false' },
      // No DNS at all: every name fails to resolve except localhost, which is loopback.
      override: (b) =>
        b.overrideProvider(HostResolver).useValue({
          resolve: async (host: string) => {
            if (host.toLowerCase().replace(/\.$/, '') === 'localhost') return ['127.0.0.1', '::1'];
            throw Object.assign(new Error(`${host} not resolved in tests`), { code: 'ENOTFOUND' });
          },
        }),
    });
    ({ key } = await t.createKey('pro'));
  });
  afterAll(async () => {
    const lines = [...counts].map(
      ([op, c]) =>
        `  ${op.padEnd(32)} ${String(c.requests).padStart(5)} requests  2xx ${c.status2xx}  4xx ${c.status4xx}  5xx ${c.status5xx}  ${c.ms ?? '?'} ms`,
    );
    const total = [...counts.values()].reduce((n, c) => n + c.requests, 0);
    const ms = [...counts.values()].reduce((n, c) => n + (c.ms ?? 0), 0);
    process.stdout.write(`\nfuzz: ${total} requests over ${counts.size} operations in ${ms} ms\n${lines.join('\n')}\n`);
    await t?.close();
  });

  // ---- valid requests from the schema ------------------------------------------------------------

  /** A valid value for `schema`: its example, default or first enum value, else one built from its type. */
  function sample(schema: Json, name = ''): Json {
    schema = resolveRef(doc, schema ?? {});
    if (name === 'url' || name.endsWith('Url')) return VALID_URL;
    if (schema.example !== undefined) return withValidUrls(structuredClone(schema.example));
    if (schema.default !== undefined) return structuredClone(schema.default);
    if (schema.enum) return schema.enum[0];
    if (schema.const !== undefined) return schema.const;
    for (const combinator of ['oneOf', 'anyOf']) if (schema[combinator]) return sample(schema[combinator][0], name);
    if (schema.allOf) {
      // The members, and the schema's own properties beside them (a body referring to the capture options).
      const { allOf, ...own } = schema;
      return Object.assign({}, ...allOf.map((s: Json) => sample(s, name)), own.properties ? sample(own, name) : {});
    }
    const type = Array.isArray(schema.type) ? schema.type.find((x: string) => x !== 'null') : schema.type;
    switch (type) {
      case 'string':
        return 'x'.repeat(Math.max(1, schema.minLength ?? 1));
      case 'integer':
      case 'number':
        return schema.minimum ?? 1;
      case 'boolean':
        return false;
      case 'array':
        return Array.from({ length: Math.max(1, schema.minItems ?? 1) }, () => sample(schema.items ?? {}));
      default: {
        const out: Record<string, Json> = {};
        for (const prop of schema.required ?? []) out[prop] = sample(schema.properties?.[prop] ?? {}, prop);
        return out;
      }
    }
  }

  /** Replaces every `url` member of an example by {@link VALID_URL}, so no valid request names a real host. */
  function withValidUrls(value: Json): Json {
    if (Array.isArray(value)) return value.map(withValidUrls);
    if (value && typeof value === 'object') {
      return Object.fromEntries(
        Object.entries(value).map(([k, v]) => [k, k === 'url' && typeof v === 'string' ? VALID_URL : withValidUrls(v)]),
      );
    }
    return value;
  }

  /** The media type and schema of an operation's request body, and a valid body (first example, else built). */
  function requestBodyOf(op: DocOperation): { mediaType: string; schema: Json; valid: Json } | null {
    const requestBody = resolveRef(doc, op.operation.requestBody ?? null);
    if (!requestBody?.content) return null;
    const [mediaType, media] = Object.entries<Json>(requestBody.content)[0];
    const example = media.example ?? Object.values<Json>(media.examples ?? {})[0]?.value;
    const schema = resolveRef(doc, media.schema ?? {});
    return { mediaType, schema, valid: example !== undefined ? withValidUrls(structuredClone(example)) : sample(schema) };
  }

  // ---- fixtures: real ids for path parameters ----------------------------------------------------

  const fixtureIds = new Map<string, string>();

  async function call(method: string, path: string, body?: Json): Promise<RawResponse> {
    return rawRequest(t.baseUrl, method, path, {
      body: body === undefined ? undefined : JSON.stringify(body),
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      timeoutMs: REQUEST_TIMEOUT_MS,
    });
  }

  /**
   * An existing id for the path parameter that follows `collection` (a concrete path such as
   * `/v1/webhooks` or `/v1/webhooks/we_…/deliveries`): the id created by the collection's POST, else
   * the first item its GET lists (after sending the other bodiless POSTs below the parent resource,
   * which create such items: a test delivery), else the parameter's documented example.
   */
  async function fixtureId(collectionTemplate: string, collection: string, example: string): Promise<string> {
    const cached = fixtureIds.get(collection);
    if (cached) return cached;
    let id: string | undefined;
    const create = operations.find((o) => o.method === 'post' && o.path === collectionTemplate);
    const body = create && requestBodyOf(create);
    if (create && (!body || body.mediaType === 'application/json')) {
      const res = await call('POST', collection, body?.valid ?? undefined);
      id = res.body?.id;
    }
    if (!id && operations.some((o) => o.method === 'get' && o.path === collectionTemplate)) {
      const parent = collection.slice(0, collection.lastIndexOf('/'));
      const parentTemplate = collectionTemplate.slice(0, collectionTemplate.lastIndexOf('/'));
      for (const o of operations) {
        const rest = o.path.startsWith(`${parentTemplate}/`) ? o.path.slice(parentTemplate.length + 1) : '';
        if (o.method === 'post' && rest && !rest.includes('/') && !rest.includes('{') && !requestBodyOf(o))
          await call('POST', `${parent}/${rest}`);
      }
      id = (await call('GET', collection)).body?.data?.[0]?.id;
    }
    id ??= example;
    fixtureIds.set(collection, id);
    return id;
  }

  /** The operation's path with every parameter replaced by an existing id (or its example). */
  async function concretePath(op: DocOperation): Promise<string> {
    let concrete = '';
    let template = '';
    for (const segment of op.path.split('/').slice(1)) {
      const param = /^\{(.+)\}$/.exec(segment)?.[1];
      if (param) {
        const declared = op.parameters.find((p) => p.in === 'path' && p.name === param);
        const example = String(declared?.example ?? declared?.schema?.example ?? 'x_000000000000000000000000');
        concrete += `/${encodeURIComponent(await fixtureId(template, concrete, example))}`;
      } else {
        concrete += `/${segment}`;
      }
      template += `/${segment}`;
    }
    return concrete;
  }

  // ---- hostile variants ---------------------------------------------------------------------------

  /**
   * Hostile values for a field of `schema` (raw JSON text, so invalid UTF-8 and deep nesting fit).
   * Fields nested in objects or array items get the shorter list (their parsing and validation paths
   * are the top-level ones'), and only string fields get a 1 MB value, which keeps the run under a minute.
   */
  function hostileValues(schema: Json, name: string, nested: boolean): Array<[string, string | Buffer]> {
    schema = resolveRef(doc, schema ?? {});
    const type = Array.isArray(schema.type) ? schema.type.find((x: string) => x !== 'null') : schema.type;
    const wrongTypes: Json[] =
      type === 'string'
        ? [12345, {}, []]
        : type === 'integer' || type === 'number'
          ? ['12', 1.5, 1e308, {}, 2 ** 53 + 1]
          : type === 'boolean'
            ? ['true', 1]
            : type === 'array'
              ? ['x', {}, [null], [[]], Array.from({ length: 1000 }, () => 'x')]
              : ['x', [], 1];
    const values: Array<[string, string | Buffer]> = [
      ...(nested ? wrongTypes.slice(0, 3) : wrongTypes).map((v): [string, string] => [
        `wrong type ${JSON.stringify(v).slice(0, 20)}`,
        JSON.stringify(v),
      ]),
      ['null', 'null'],
      ['empty string', '""'],
      ['NUL', JSON.stringify('a\u0000b')],
      ['nested 10,000 deep', DEEP(10_000)],
      ['__proto__ object', '{"__proto__":{"polluted":true}}'],
    ];
    if (!nested) {
      values.push(
        ['invalid UTF-8', INVALID_UTF8_STRING],
        ['constructor.prototype object', '{"constructor":{"prototype":{"polluted":true}}}'],
        ['lone surrogate', '"\\ud800"'],
      );
      if (type === 'string' || type === undefined) values.push(['1 MB string', JSON.stringify(ONE_MB)]);
    }
    if (name === 'url') values.push(...SSRF_URLS.map((u): [string, string] => [`SSRF ${u}`, JSON.stringify(u)]));
    return values;
  }

  /** Every (dotted path, schema) of the body's fields, nested objects and array items included (3 levels). */
  function fieldsOf(schema: Json, prefix: string[] = [], depth = 0): Array<{ path: string[]; schema: Json }> {
    schema = resolveRef(doc, schema ?? {});
    if (depth > 3) return [];
    const out: Array<{ path: string[]; schema: Json }> = [];
    for (const [name, prop] of Object.entries<Json>(propertiesOf(doc, schema))) {
      const resolved = resolveRef(doc, prop);
      out.push({ path: [...prefix, name], schema: resolved });
      if (resolved.properties || resolved.allOf) out.push(...fieldsOf(resolved, [...prefix, name], depth + 1));
      const items = resolved.items && resolveRef(doc, resolved.items);
      if (items?.properties || items?.allOf) out.push(...fieldsOf(items, [...prefix, name, '0'], depth + 1));
    }
    return out;
  }

  /** `valid` as JSON text with the field at `path` replaced by `raw` (raw JSON bytes). */
  function replaceField(valid: Json, path: string[], raw: string | Buffer): Buffer {
    const marker = `@@FUZZ${Math.random().toString(36).slice(2)}@@`;
    const copy = structuredClone(valid) ?? {};
    let node = copy;
    for (const [i, segment] of path.entries()) {
      if (i === path.length - 1) node[segment] = marker;
      else {
        node[segment] ??= /^\d+$/.test(path[i + 1]) ? [] : {};
        if (/^\d+$/.test(path[i + 1]) && node[segment].length === 0) node[segment].push({});
        node = node[segment];
      }
    }
    const [before, after] = JSON.stringify(copy).split(JSON.stringify(marker));
    return Buffer.concat([Buffer.from(before), Buffer.isBuffer(raw) ? raw : Buffer.from(raw), Buffer.from(after)]);
  }

  /**
   * Fields already given the full list of hostile values, by name and schema. The capture options
   * recur in five bodies (a screenshot, a batch's items, a run, a monitor and its update), declared once
   * in the options table (docs/capture-options.md) and validated by the same rules in each: after the
   * first body, a recurring field gets only {@link REPEATED_FIELD_VALUES}, which still reach each
   * body's own validation and service. A value nested 10,000 deep is refused by the body check every
   * JSON route shares, before any route's validation (src/common/body-parsing.ts), so it is sent in
   * the first body with the field and in every body as a whole, not again per recurring field. That
   * makes the walk about 4,160 requests instead of 5,600.
   */
  const fuzzedFields = new Set<string>();
  /** The hostile values a field gets in a body after the first that has it (see {@link fuzzedFields}). */
  const REPEATED_FIELD_VALUES = new Set(['null', 'empty string']);

  /** {@link hostileValues} for `field`, shortened when the same field was fuzzed in an earlier body. */
  function fieldValues(field: { path: string[]; schema: Json }): Array<[string, string | Buffer]> {
    const name = field.path[field.path.length - 1];
    const values = hostileValues(field.schema, name, field.path.length > 1);
    const signature = `${name} ${JSON.stringify(field.schema)}`;
    if (!fuzzedFields.has(signature)) {
      fuzzedFields.add(signature);
      return values;
    }
    return values.filter(([label], i) => i === 0 || REPEATED_FIELD_VALUES.has(label) || label.startsWith('SSRF'));
  }

  function jsonBodyCases(op: DocOperation, path: string, valid: Json, schema: Json): FuzzCase[] {
    const cases: FuzzCase[] = [];
    const json = 'application/json';
    for (const field of fieldsOf(schema)) {
      for (const [label, raw] of fieldValues(field)) {
        // A capture URL is refused at submission, also per item of a batch (`items[i].url`); a URL
        // deeper down (a run step's) may be refused only when the browser goes there.
        const submitted = field.path.length === 1 || (field.path.length === 3 && field.path[0] === 'items' && field.path[1] === '0');
        const refuse = label.startsWith('SSRF') && submitted && op.method === 'post';
        cases.push({
          name: `${field.path.join('.')}: ${label}`,
          path,
          body: replaceField(valid, field.path, raw),
          contentType: json,
          expect4xx: refuse || undefined,
        });
      }
    }
    const validText = JSON.stringify(valid ?? {});
    const firstKey = Object.keys(valid ?? {})[0];
    const whole: Array<[string, string | Buffer, string?]> = [
      ['duplicate keys', firstKey ? `{${JSON.stringify(firstKey)}:1,${validText.slice(1)}` : '{"a":1,"a":2}'],
      ['__proto__ key', `{"__proto__":{"polluted":true},${validText.slice(1)}`.replace(',}', '}')],
      ['constructor key', `{"constructor":{"prototype":{"polluted":true}},${validText.slice(1)}`.replace(',}', '}')],
      ['prototype key', `{"prototype":1,${validText.slice(1)}`.replace(',}', '}')],
      ['null body', 'null'],
      ['array body', '[]'],
      ['array of the valid body', `[${validText}]`],
      ['string body', '"x"'],
      ['number body', '123'],
      ['empty object', '{}'],
      ['truncated JSON', validText.slice(0, -1)],
      ['not JSON', 'url=x'],
      ['nested 10,000 deep', DEEP(10_000)],
      ['objects nested 10,000 deep', '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000)],
      ['invalid UTF-8', Buffer.concat([Buffer.from('{"a":'), INVALID_UTF8_STRING, Buffer.from('}')])],
      ['UTF-8 BOM', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(validText)])],
      ['over 1 MiB', `{"x":"${'a'.repeat(1024 * 1024)}"}`],
      ['text/plain', validText, 'text/plain'],
      ['form-urlencoded', 'url=x', 'application/x-www-form-urlencoded'],
      ['multipart', multipartBody([{ name: 'url', value: VALID_URL }]).body, 'multipart/form-data; boundary=nope'],
      ['charset utf-7', validText, 'application/json; charset=utf-7'],
      ['charset utf-16le', Buffer.from(validText, 'utf16le'), 'application/json; charset=utf-16le'],
      ['charset latin1', validText, 'application/json; charset=iso-8859-1'],
      ['malformed content type', validText, 'application/json; charset'],
      ['no content type', validText, ''],
    ];
    for (const [name, body, contentType] of whole) cases.push({ name: `body: ${name}`, path, body, contentType: contentType ?? json });
    return cases;
  }

  function multipartCases(path: string, valid: Json, schema: Json): FuzzCase[] {
    const cases: FuzzCase[] = [];
    const fileName = Object.entries<Json>(propertiesOf(doc, schema)).find(([, p]) => resolveRef(doc, p).format === 'binary')?.[0] ?? 'file';
    const fields = Object.entries<Json>(valid ?? {})
      .filter(([k]) => k !== fileName)
      .map(([name, value]) => ({ name, value: String(value) }));
    const file = (value: Buffer | string = String(valid?.[fileName] ?? '<h1>fuzz</h1>'), contentType = 'text/html') => ({
      name: fileName,
      value,
      filename: 'fuzz.html',
      contentType,
    });
    const form = (parts: Parameters<typeof multipartBody>[0], name: string): FuzzCase => {
      const { body, contentType } = multipartBody(parts);
      return { name, path, body, contentType };
    };
    for (const [name] of Object.entries<Json>(propertiesOf(doc, schema))) {
      if (name === fileName) continue;
      const others = fields.filter((f) => f.name !== name);
      const hostile: Array<[string, Buffer | string]> = [
        ['wrong type', 'abc'],
        ['empty', ''],
        ['NUL', 'a\u0000b'],
        ['invalid UTF-8', Buffer.from([0xff, 0xfe, 0x41])],
        ['JSON object', '{"__proto__":{"polluted":true}}'],
        ['huge number', '1e308'],
      ];
      for (const [label, value] of hostile) cases.push(form([file(), ...others, { name, value }], `${name}: ${label}`));
      cases.push(form([file(), ...fields, { name, value: String(valid?.[name] ?? '1') }], `${name}: duplicated`));
      cases.push(form([file(), ...others, { name: `${name}${'[a]'.repeat(30)}`, value: '1' }], `${name}: bracket-nested name`));
    }
    const firstField = Object.keys(propertiesOf(doc, schema)).find((n) => n !== fileName);
    if (firstField) {
      cases.push(form([file(), { name: firstField, value: ONE_MB }], `${firstField}: 1 MB`));
      cases.push(form([file(), { name: `${firstField}[__proto__]`, value: '1' }], `${firstField}: [__proto__] name`));
    }
    for (const reserved of ['__proto__', 'constructor', 'prototype', 'constructor[prototype]', '__proto__[polluted]']) {
      cases.push({ ...form([file(), ...fields, { name: reserved, value: 'x' }], `field named ${reserved}`), expect4xx: true });
    }
    cases.push(form([...fields], 'no file'));
    cases.push(form([file(), file(), ...fields], 'two files'));
    cases.push(form([file(Buffer.alloc(10 * 1024 * 1024 + 1, 'a')), ...fields], 'file over 10 MiB'));
    cases.push(form([file('<h1>x</h1>', 'application/json'), ...fields], 'file of the wrong type'));
    cases.push(form([file(Buffer.from([0xff, 0xfe, 0x00, 0x41])), ...fields], 'binary file'));
    cases.push(form([file(), ...fields, ...Array.from({ length: 200 }, (_, i) => ({ name: `f${i}`, value: 'x' }))], 'too many fields'));
    cases.push({ name: 'JSON body', path, body: JSON.stringify(valid), contentType: 'application/json' });
    cases.push({ name: 'multipart without boundary', path, body: 'x', contentType: 'multipart/form-data' });
    cases.push({
      name: 'truncated multipart',
      path,
      body: multipartBody([file()]).body.subarray(0, 60),
      contentType: multipartBody([]).contentType,
    });
    return cases;
  }

  function pathCases(op: DocOperation, concrete: string): FuzzCase[] {
    const segments = op.path.split('/');
    const cases: FuzzCase[] = [];
    const bad = [
      '%E0%A4%A',
      '%',
      '%zz',
      '%00',
      '__proto__',
      'constructor',
      'x'.repeat(5000),
      '..',
      '%2e%2e%2f%2e%2e',
      'scr_%C3%A4',
      'we_%C0%AF',
      `scr_${'0'.repeat(24)}`,
      `we_${'0'.repeat(24)}`,
      'null',
      '-1',
      '0x10',
    ];
    const concreteSegments = concrete.split('/');
    segments.forEach((segment, i) => {
      if (!/^\{.+\}$/.test(segment)) return;
      for (const value of bad) {
        const path = concreteSegments.map((s, j) => (j === i ? value : s)).join('/');
        cases.push({ name: `path ${segment}=${value.slice(0, 20)}`, path, expect4xx: true });
      }
    });
    return cases;
  }

  function queryCases(op: DocOperation, concrete: string): FuzzCase[] {
    const cases: FuzzCase[] = [];
    const names = op.parameters.filter((p) => p.in === 'query').map((p) => p.name as string);
    for (const name of names) {
      for (const value of ['abc', '', '-1', '1e308', '%00', '%E0%A4%A', 'x'.repeat(5000), '1&' + name + '=2', '[]', '{}']) {
        cases.push({ name: `query ${name}=${value.slice(0, 20)}`, path: concrete, query: `${name}=${value}` });
      }
    }
    for (const value of ['__proto__=1', 'constructor=1', '__proto__[polluted]=1', 'unknownParam=1', '%=1']) {
      cases.push({ name: `query ${value}`, path: concrete, query: value });
    }
    return cases;
  }

  /** The valid request under hostile operational headers (idempotency, organization, request id, accept). */
  function headerCases(valid: FuzzCase): FuzzCase[] {
    const hostile: Array<[string, string]> = [
      ['Idempotency-Key', 'short'],
      ['Idempotency-Key', 'k'.repeat(129)],
      ['Idempotency-Key', 'has spaces and ü'],
      ['Idempotency-Key', '__proto__'],
      ['X-Organization-ID', '../../etc/passwd'],
      ['X-Organization-ID', 'o'.repeat(5000)],
      ['X-Request-ID', 'r'.repeat(5000)],
      ['Accept', 'text/html'],
      ['Content-Encoding', 'gzip'],
      ['Content-Encoding', 'br, identity'],
    ];
    return hostile.map(([name, value]) => ({ ...valid, name: `header ${name}: ${value.slice(0, 20)}`, headers: { [name]: value } }));
  }

  /** Sends one case and records a failure unless the answer is a 2xx or an enveloped 4xx. */
  async function run(op: DocOperation, c: FuzzCase): Promise<void> {
    const label = `${op.operationId} [${c.name}]`;
    const stat = counts.get(op.operationId) ?? { requests: 0, status2xx: 0, status4xx: 0, status5xx: 0 };
    counts.set(op.operationId, stat);
    stat.requests++;
    let res: RawResponse;
    try {
      res = await rawRequest(t.baseUrl, op.method.toUpperCase(), c.path + (c.query ? `?${c.query}` : ''), {
        body: c.body,
        headers: { authorization: `Bearer ${key}`, ...(c.contentType ? { 'content-type': c.contentType } : {}), ...c.headers },
        timeoutMs: REQUEST_TIMEOUT_MS,
      });
    } catch (err) {
      failures.push(`${label}: ${(err as Error).message}`);
      return;
    }
    if (res.status >= 500) stat.status5xx++;
    else if (res.status >= 400) stat.status4xx++;
    else stat.status2xx++;
    if (res.status >= 200 && res.status < 300) {
      if (c.expect4xx) failures.push(`${label}: accepted (${res.status}) but must be refused`);
      return;
    }
    const envelope = res.body && typeof res.body === 'object' ? res.body : {};
    const ok =
      res.status >= 400 &&
      res.status < 500 &&
      typeof envelope.error === 'string' &&
      typeof envelope.code === 'string' &&
      envelope.requestId === res.headers['x-request-id'];
    if (!ok) failures.push(`${label}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
  }

  async function runAll(op: DocOperation, cases: FuzzCase[]): Promise<void> {
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < cases.length) await run(op, cases[next++]);
      }),
    );
  }

  it('answers every hostile request with a 2xx or an enveloped 4xx, within the time limit, for every operation', async () => {
    // Deleting operations last, so the fixtures stay for the others.
    const ordered = [...operations].sort((a, b) => Number(a.method === 'delete') - Number(b.method === 'delete'));
    expect(ordered.length).toBeGreaterThanOrEqual(8);
    for (const op of ordered) {
      const path = await concretePath(op);
      const body = requestBodyOf(op);
      const cases: FuzzCase[] = [];
      if (body?.mediaType === 'multipart/form-data') {
        const { body: form, contentType } = multipartBody(
          Object.entries<Json>(body.valid).map(([name, value]) =>
            name === 'file' ? { name, value: String(value), filename: 'a.html', contentType: 'text/html' } : { name, value: String(value) },
          ),
        );
        cases.push({ name: 'valid', path, body: form, contentType });
      } else {
        cases.push({ name: 'valid', path, ...(body ? { body: JSON.stringify(body.valid), contentType: 'application/json' } : {}) });
      }
      if (body?.mediaType === 'multipart/form-data') cases.push(...multipartCases(path, body.valid, body.schema));
      else cases.push(...jsonBodyCases(op, path, body?.valid ?? {}, body?.schema ?? {}));
      cases.push(...headerCases(cases[0]), ...queryCases(op, path), ...pathCases(op, path));
      const started = Date.now();
      await runAll(op, cases);
      counts.get(op.operationId)!.ms = Date.now() - started;
    }
    expect(failures).toEqual([]);
    for (const [op, c] of counts) expect([op, c.status5xx]).toEqual([op, 0]);
    // Each request is bounded by REQUEST_TIMEOUT_MS (a hang fails it). The whole walk (about 4,160
    // requests over 34 operations) took 6 s alone on an idle 2-core machine and 30-90 s on one busy with
    // other work; the limit below leaves room for a busier one.
  }, 300_000);
});
