/**
 * `@glimpse/sdk/webhooks`: verifies Glimpse webhook deliveries on the receiver's side with Web Crypto
 * (`crypto.subtle`), so it runs in Node ≥ 20, Deno, Cloudflare Workers and browsers.
 *
 * A delivery is an HTTP POST whose raw body is the JSON event `{ id, type, createdAt, data }` with the
 * headers `Webhook-Id` (the delivery id, the same on every retry: deduplicate on it), `Webhook-Timestamp`,
 * `Webhook-Signature` and `X-Glimpse-Event` (README "Webhooks"). The endpoint's `signatureScheme` decides
 * the signature:
 * - `glimpse-v1` (default): `Webhook-Signature: t=<unix s>,v1=<hex>[,v1=<hex>…]`, lower-case hex
 *   HMAC-SHA256 over `<t>.<raw body>`, keyed with the whole secret string `whsec_…` as UTF-8 (Stripe's scheme);
 * - `standard-webhooks`: `Webhook-Signature: v1,<base64>[ v1,<base64>…]`, base64 HMAC-SHA256 over
 *   `<Webhook-Id>.<Webhook-Timestamp>.<raw body>`, keyed with the base64-decoded part of the secret after
 *   `whsec_` (the Standard Webhooks specification).
 * During a secret rotation with overlap, one signature per valid secret is sent; any match is accepted.
 */
import type { WebhookEvent } from './types';

export type { WebhookEvent, WebhookEventMap, WebhookEventType } from './types';

/** Largest accepted difference between the signature's timestamp and the receiver's clock, s (spec section 6.3). */
export const DEFAULT_TOLERANCE_S = 300;

/** Why a delivery was rejected. */
export type WebhookVerificationErrorCode =
  /** No `Webhook-Signature` header. */
  | 'MISSING_SIGNATURE'
  /** The header fits neither scheme, or `standard-webhooks` lacks `Webhook-Id`/`Webhook-Timestamp`. */
  | 'MALFORMED_SIGNATURE'
  /** The timestamp differs from the receiver's clock by more than the tolerance (a replay, or a skewed clock). */
  | 'TIMESTAMP_OUT_OF_TOLERANCE'
  /** No signature matches any of the given secrets (wrong secret, or the body was altered). */
  | 'SIGNATURE_MISMATCH'
  /** Correctly signed, but the body is not an event `{ id, type, createdAt, data }`. */
  | 'INVALID_PAYLOAD';

/** Thrown by {@link verifyWebhook}; answer such requests with a 400 and do not process them. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  constructor(
    readonly code: WebhookVerificationErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** Request headers: a fetch `Headers`, or a plain object such as Node's `req.headers` (any case). */
export type WebhookHeaders = { get(name: string): string | null } | Record<string, string | string[] | undefined>;

/** Options of {@link verifyWebhook}. */
export interface VerifyWebhookOptions {
  /** Largest accepted age (or lead) of the signature's timestamp, in seconds (default 300; 0 disables the check, not recommended). */
  toleranceS?: number;
  /** The receiver's clock in Unix seconds (default: now; for tests). */
  nowS?: number;
}

const encoder = new TextEncoder();

/**
 * Verifies one delivery of either scheme and returns its event, typed from the OpenAPI document's
 * `webhooks` section (switch on `type`).
 *
 * @param rawBody the request body exactly as received (bytes or the undecoded string); a re-serialised
 *   JSON object does not verify.
 * @param headers the request headers (`Webhook-Signature`; with `standard-webhooks` also `Webhook-Id`
 *   and `Webhook-Timestamp`).
 * @param secret the endpoint's signing secret `whsec_…`, or several (e.g. old and new during a
 *   rotation): any match is accepted.
 * @throws WebhookVerificationError with a {@link WebhookVerificationErrorCode}; `TypeError` for an empty
 *   secret, or a `standard-webhooks` secret that is not base64 after `whsec_`.
 */
export async function verifyWebhook(
  rawBody: string | Uint8Array | ArrayBuffer,
  headers: WebhookHeaders,
  secret: string | readonly string[],
  options: VerifyWebhookOptions = {},
): Promise<WebhookEvent> {
  const { toleranceS = DEFAULT_TOLERANCE_S, nowS = Math.floor(Date.now() / 1000) } = options;
  const secrets = typeof secret === 'string' ? [secret] : [...secret];
  if (!secrets.length || secrets.some((s) => typeof s !== 'string' || !s)) {
    throw new TypeError('verifyWebhook: secret must be a non-empty string or array of strings');
  }
  const header = headerValue(headers, 'webhook-signature');
  if (!header) throw new WebhookVerificationError('MISSING_SIGNATURE', 'Webhook-Signature header is missing');
  const body = typeof rawBody === 'string' ? encoder.encode(rawBody) : rawBody instanceof Uint8Array ? rawBody : new Uint8Array(rawBody);
  const signed = parseSignature(header, headers);

  if (toleranceS > 0 && Math.abs(nowS - signed.timestamp) > toleranceS) {
    throw new WebhookVerificationError(
      'TIMESTAMP_OUT_OF_TOLERANCE',
      `signature timestamp ${signed.timestamp} is more than ${toleranceS} s away from now (${nowS})`,
    );
  }
  const content = concat(encoder.encode(signed.prefix), body);
  let matched = false;
  for (const candidate of secrets) {
    const key = await crypto.subtle.importKey(
      'raw',
      signed.scheme === 'glimpse-v1' ? encoder.encode(candidate) : standardKey(candidate),
      { name: 'HMAC', hash: 'SHA-256' },
      false,
      ['verify'],
    );
    // crypto.subtle.verify compares in constant time; every candidate is checked (no early exit).
    for (const signature of signed.signatures) if (await crypto.subtle.verify('HMAC', key, signature, content)) matched = true;
  }
  if (!matched) throw new WebhookVerificationError('SIGNATURE_MISMATCH', 'no signature matches the secret');
  return parseEvent(body);
}

interface SignedContent {
  scheme: 'glimpse-v1' | 'standard-webhooks';
  timestamp: number;
  /** What precedes the raw body in the signed content. */
  prefix: string;
  signatures: Uint8Array<ArrayBuffer>[];
}

/**
 * `t=<unix s>,v1=<64 hex>[,v1=…]` (glimpse-v1; other keys ignored) or space-separated `v1,<base64>`
 * (standard-webhooks; other versions ignored). Throws `MALFORMED_SIGNATURE` when neither yields a signature.
 */
function parseSignature(header: string, headers: WebhookHeaders): SignedContent {
  if (/^\s*t=/.test(header)) {
    let timestamp: number | null = null;
    const signatures: Uint8Array<ArrayBuffer>[] = [];
    for (const part of header.split(',')) {
      const at = part.indexOf('=');
      const key = part.slice(0, at).trim();
      const value = part.slice(at + 1).trim();
      if (key === 't' && /^\d{1,12}$/.test(value)) timestamp = Number(value);
      if (key === 'v1' && /^[0-9a-fA-F]{64}$/.test(value)) signatures.push(Uint8Array.from(value.match(/../g)!, (h) => parseInt(h, 16)));
    }
    if (timestamp === null || !signatures.length) {
      throw new WebhookVerificationError('MALFORMED_SIGNATURE', 'Webhook-Signature must look like t=<unix seconds>,v1=<hex HMAC-SHA256>');
    }
    return { scheme: 'glimpse-v1', timestamp, prefix: `${timestamp}.`, signatures };
  }
  const signatures = header
    .trim()
    .split(/\s+/)
    .filter((part) => /^v1,[A-Za-z0-9+/]{43}=$/.test(part))
    .map((part) => base64Bytes(part.slice(3)));
  const id = headerValue(headers, 'webhook-id');
  const timestamp = headerValue(headers, 'webhook-timestamp');
  if (!signatures.length || !id || !timestamp || !/^\d{1,12}$/.test(timestamp)) {
    throw new WebhookVerificationError(
      'MALFORMED_SIGNATURE',
      'Webhook-Signature must be t=<unix s>,v1=<hex> (glimpse-v1) or v1,<base64> with Webhook-Id and Webhook-Timestamp (standard-webhooks)',
    );
  }
  return { scheme: 'standard-webhooks', timestamp: Number(timestamp), prefix: `${id}.${timestamp}.`, signatures };
}

/** The HMAC key of `standard-webhooks`: the base64-decoded part after `whsec_`. */
function standardKey(secret: string): Uint8Array<ArrayBuffer> {
  const encoded = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded))
    throw new TypeError('verifyWebhook: a standard-webhooks secret is whsec_ followed by base64');
  return base64Bytes(encoded);
}

function base64Bytes(value: string): Uint8Array<ArrayBuffer> {
  return Uint8Array.from(atob(value), (c) => c.charCodeAt(0));
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

function parseEvent(body: Uint8Array): WebhookEvent {
  let event: unknown;
  try {
    event = JSON.parse(new TextDecoder().decode(body));
  } catch {
    throw new WebhookVerificationError('INVALID_PAYLOAD', 'body is not JSON');
  }
  const e = event as Partial<Record<'id' | 'type' | 'createdAt' | 'data', unknown>> | null;
  if (
    !e ||
    typeof e !== 'object' ||
    typeof e.id !== 'string' ||
    typeof e.type !== 'string' ||
    typeof e.createdAt !== 'string' ||
    typeof e.data !== 'object' ||
    e.data === null
  ) {
    throw new WebhookVerificationError('INVALID_PAYLOAD', 'body is not an event envelope { id, type, createdAt, data }');
  }
  return event as WebhookEvent;
}

/** A header's value, case-insensitively; the first one when repeated. */
function headerValue(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') {
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  }
  for (const [key, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (key.toLowerCase() === name) return Array.isArray(value) ? value[0] : value;
  }
  return undefined;
}
