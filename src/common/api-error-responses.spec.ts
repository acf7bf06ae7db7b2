import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { documentErrorDetails, errorResponseOptions } from './api-error-responses.decorator';

/** The `allOf[1]` part of an error response's schema: `code` narrowed, and `details` where documented. */
function narrowedOf(options: ReturnType<typeof errorResponseOptions>): SchemaObject {
  return options.schema.allOf[1] as SchemaObject;
}

describe('documented error details', () => {
  it("puts a declared code's details schema and example into the responses that list the code", () => {
    const limit: SchemaObject = { type: 'integer', description: 'the limit' };
    documentErrorDetails('IDEMPOTENCY_KEY_REUSED', { limit }, { limit: 3 });
    const options = errorResponseOptions({ status: 422, codes: ['IDEMPOTENCY_KEY_REUSED'] });
    expect(narrowedOf(options)).toEqual({
      type: 'object',
      required: ['code', 'details'],
      properties: {
        code: { type: 'string', enum: ['IDEMPOTENCY_KEY_REUSED'] },
        details: { type: 'object', required: ['limit'], properties: { limit } },
      },
    });
    expect(options.example).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED', details: { limit: 3 } });
  });

  it('documents no details for a code nobody declared', () => {
    const options = errorResponseOptions({ status: 404, codes: ['NOT_FOUND'] });
    expect(narrowedOf(options).properties).not.toHaveProperty('details');
    expect(options.example).not.toHaveProperty('details');
  });

  it('refuses a declaration that comes after a route documented the code without it', () => {
    errorResponseOptions({ status: 409, codes: ['IDEMPOTENCY_IN_FLIGHT'] });
    expect(() => documentErrorDetails('IDEMPOTENCY_IN_FLIGHT', {}, {})).toThrow(/after a route documented/);
  });

  it('refuses a second declaration of one code', () => {
    documentErrorDetails('INVALID_ORGANIZATION_ID', {}, {});
    expect(() => documentErrorDetails('INVALID_ORGANIZATION_ID', {}, {})).toThrow(/already documented/);
  });
});
