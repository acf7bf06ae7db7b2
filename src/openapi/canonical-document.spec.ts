import { canonicalizeDocument, serializeDocument, toOpenApi31Schemas } from './canonical-document';

describe('canonicalizeDocument', () => {
  const doc = {
    paths: {
      '/v1/b': {
        post: {
          tags: ['z', 'a'],
          parameters: [
            { in: 'query', name: 'q' },
            { in: 'header', name: 'X-B' },
            { in: 'header', name: 'X-A' },
          ],
        },
      },
      '/v1/a': { get: { responses: { '404': {}, '200': {} } } },
    },
    components: { schemas: { B: { required: ['y', 'x'], properties: { y: {}, x: { enum: ['pending', 'done'] } } }, A: {} } },
    tags: [{ name: 'webhooks' }, { name: 'screenshots' }],
    info: { title: 't', version: '1', contact: {} },
    openapi: '3.1.0',
  };

  it('sorts keys, sets and top-level sections so that declaration order does not matter', () => {
    const shuffled = {
      openapi: doc.openapi,
      info: { version: '1', title: 't', contact: {} },
      tags: [...doc.tags].reverse(),
      components: { schemas: { A: {}, B: { properties: { x: { enum: ['pending', 'done'] }, y: {} }, required: ['x', 'y'] } } },
      paths: {
        '/v1/a': doc.paths['/v1/a'],
        '/v1/b': { post: { parameters: [...doc.paths['/v1/b'].post.parameters].reverse(), tags: ['a', 'z'] } },
      },
    };
    expect(serializeDocument(canonicalizeDocument(shuffled))).toBe(serializeDocument(canonicalizeDocument(doc)));
  });

  it('keeps meaningful array order (enums) and the conventional top-level order, and drops empty contact', () => {
    const out = canonicalizeDocument(doc) as any;
    expect(Object.keys(out)).toEqual(['openapi', 'info', 'tags', 'paths', 'components']);
    expect(Object.keys(out.paths)).toEqual(['/v1/a', '/v1/b']);
    expect(out.paths['/v1/b'].post.parameters.map((p: any) => p.name)).toEqual(['X-A', 'X-B', 'q']);
    expect(out.components.schemas.B.required).toEqual(['x', 'y']);
    expect(out.components.schemas.B.properties.x.enum).toEqual(['pending', 'done']);
    expect(out.tags.map((t: any) => t.name)).toEqual(['screenshots', 'webhooks']);
    expect(out.info).toEqual({ title: 't', version: '1' });
  });

  it('serializes with two-space indentation and a trailing newline', () => {
    expect(serializeDocument({ a: 1 })).toBe('{\n  "a": 1\n}\n');
  });
});

describe('toOpenApi31Schemas', () => {
  it('turns nullable types into type arrays, adding null to enums', () => {
    expect(toOpenApi31Schemas({ type: 'string', nullable: true, description: 'd' })).toEqual({
      type: ['string', 'null'],
      description: 'd',
    });
    expect(toOpenApi31Schemas({ type: 'string', enum: ['a'], nullable: true })).toEqual({ type: ['string', 'null'], enum: ['a', null] });
  });

  it('wraps a nullable reference in oneOf with null, keeping its description outside', () => {
    expect(toOpenApi31Schemas({ allOf: [{ $ref: '#/x' }], nullable: true, description: 'd' })).toEqual({
      description: 'd',
      oneOf: [{ allOf: [{ $ref: '#/x' }] }, { type: 'null' }],
    });
  });

  it('converts nested schemas and leaves non-nullable ones alone', () => {
    const input = {
      properties: { a: { type: 'integer', nullable: false }, b: { type: 'object', properties: { c: { type: 'string', nullable: true } } } },
    };
    expect(toOpenApi31Schemas(input)).toEqual({
      properties: { a: { type: 'integer' }, b: { type: 'object', properties: { c: { type: ['string', 'null'] } } } },
    });
  });
});
