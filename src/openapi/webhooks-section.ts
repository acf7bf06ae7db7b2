import type { OpenAPIObject, ParameterObject, PathItemObject, SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';

/** How receivers verify a delivery (spec section 6.3); the description of the `webhooks` tag. */
export const SIGNATURE_SCHEME = [
  'Glimpse POSTs each event, as JSON, to the enabled endpoints subscribed to its type (`["*"]` means every type, including future ones).',
  '',
  '**Verifying a delivery**, scheme `glimpse-v1` (the default; Stripe’s scheme, so Stripe’s verifier accepts it):',
  '1. Read `Webhook-Signature: t=<unix_seconds>,v1=<hex>` and keep the raw request body exactly as received.',
  '2. Compute HMAC-SHA256, keyed with the endpoint’s signing secret (the whole `whsec_…` string), over `<t>.<raw body>`; hex-encode it.',
  '3. Compare with each `v1` in constant time (during a rotation overlap there is one per valid secret, newest first); reject when `t` differs from your clock by more than 300 seconds.',
  '',
  'Scheme `standard-webhooks` (chosen per endpoint with `signatureScheme`): `Webhook-Signature: v1,<base64>` (space-separated, one per valid secret), the base64 ' +
    'HMAC-SHA256 over `<Webhook-Id>.<Webhook-Timestamp>.<raw body>` keyed with the base64-decoded part of the secret after `whsec_`, as the ' +
    'Standard Webhooks specification defines; its libraries verify it in every language.',
  '',
  'Then, whatever the scheme:',
  '1. After verification the body’s `type` is authoritative. Deliveries may arrive out of order or more than once: process idempotently, keyed on `Webhook-Id`.',
  '2. Answer 2xx within 5 seconds and do the work asynchronously. A non-2xx answer (3xx included: redirects are not followed), a network failure or 15 s without an answer schedules a retry: up to 6 attempts, after 1 min, 5 min, 30 min, 2 h and 12 h. Each attempt is signed afresh (new timestamp, same `Webhook-Id`).',
  '3. An endpoint with no successful attempt for 5 days and an exhausted delivery in that time is disabled; the account’s other endpoints get `endpoint.disabled`.',
  '',
  'Ignore event types you do not know. The TypeScript SDK exports a verifier for `glimpse-v1`.',
].join('\n');

const DELIVERY_HEADERS: Record<string, ParameterObject> = {
  WebhookId: {
    name: 'Webhook-Id',
    in: 'header',
    required: true,
    description: 'Delivery id, identical on every attempt of the delivery: deduplicate on it.',
    schema: { type: 'string', pattern: '^dlv_[A-Za-z0-9]{20,}$', example: 'dlv_7hT2mK8pQ4xW1vB8nR3sL6cZ' },
  },
  WebhookTimestamp: {
    name: 'Webhook-Timestamp',
    in: 'header',
    required: true,
    description: 'Unix seconds at signing time (the `t` of the signature).',
    schema: { type: 'string', pattern: '^[0-9]+$', example: '1795651200' },
  },
  WebhookSignature: {
    name: 'Webhook-Signature',
    in: 'header',
    required: true,
    description:
      '`glimpse-v1`: `t=<unix_seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" keyed with the signing secret>`; ' +
      '`standard-webhooks`: `v1,<base64 HMAC-SHA256 of "<Webhook-Id>.<Webhook-Timestamp>.<raw body>" keyed with the decoded secret>`. ' +
      'During a rotation overlap, one signature per valid secret, newest first.',
    schema: {
      type: 'string',
      pattern: '^(t=[0-9]+(,v1=[0-9a-f]{64})+|v1,[A-Za-z0-9+/]{43}=( v1,[A-Za-z0-9+/]{43}=)*)$',
      example: 't=1795651200,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd',
    },
  },
  UserAgent: {
    name: 'User-Agent',
    in: 'header',
    required: true,
    description: 'Identifies Glimpse deliveries; the suffix is the signature scheme version.',
    schema: { type: 'string', enum: ['Glimpse-Webhook/1'] },
  },
};

/** The operationId of a webhook: `receiveScreenshotCompletedEvent` for `screenshot.completed`. */
export function webhookOperationId(type: string): string {
  const words = type.split(/[._-]/).map((w) => w.charAt(0).toUpperCase() + w.slice(1));
  return `receive${words.join('')}Event`;
}

/**
 * Adds the OpenAPI 3.1 `webhooks` section to `doc` (mutating it): one entry per event type, named after
 * the type, with the delivery headers as parameters and the event's envelope schema as body.
 * `schemaNames` maps each event type to its component schema, whose `type` property is a one-value enum
 * of that type. `examples` holds one example body per event type. Throws when a named schema is
 * missing, its `type` enum is not the event type, or the type has no example.
 */
export function addWebhooks(doc: OpenAPIObject, schemaNames: Record<string, string>, examples: Record<string, unknown>): void {
  const schemas = doc.components?.schemas ?? {};
  doc.components = { ...doc.components, parameters: { ...doc.components?.parameters, ...DELIVERY_HEADERS } };
  const webhooks: Record<string, PathItemObject> = {};
  for (const [type, name] of Object.entries(schemaNames)) {
    const typeProperty = (schemas[name] as SchemaObject | undefined)?.properties?.type as SchemaObject | undefined;
    if (typeProperty?.enum?.length !== 1 || typeProperty.enum[0] !== type) {
      throw new Error(`Webhook event schema ${name} is missing or its "type" is not the one-value enum ["${type}"]`);
    }
    if (!examples[type]) throw new Error(`No example for webhook event ${type}`);
    webhooks[type] = {
      post: {
        operationId: webhookOperationId(type),
        summary: `Event ${type}`,
        description: `Delivered to endpoints subscribed to \`${type}\` (or \`*\`). Verify \`Webhook-Signature\` before trusting the body; see the \`webhooks\` tag for the scheme.`,
        tags: ['webhooks'],
        security: [],
        parameters: [
          ...Object.keys(DELIVERY_HEADERS).map((key) => ({ $ref: `#/components/parameters/${key}` })),
          {
            name: 'X-Glimpse-Event',
            in: 'header',
            required: true,
            description: 'The event type; mirrors the body’s `type`.',
            schema: { type: 'string', enum: [type] },
          },
        ],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { $ref: `#/components/schemas/${name}` }, example: examples[type] } },
        },
        responses: {
          '200': { description: 'Any 2xx answer acknowledges the delivery; no further attempts.' },
          '400': { description: 'Any other answer (for example a rejected signature) schedules another attempt.' },
        },
      },
    };
  }
  (doc as OpenAPIObject & { webhooks?: Record<string, PathItemObject> }).webhooks = webhooks;
}
