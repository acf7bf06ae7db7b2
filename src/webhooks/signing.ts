import { createHmac, randomBytes } from 'node:crypto';

/** Prefix of every webhook signing secret (CONTRACT.md, "Webhooks"). */
export const SIGNING_SECRET_PREFIX = 'whsec_';

/** Random bytes behind a signing secret (CONTRACT.md: at least 32). */
export const SIGNING_SECRET_BYTES = 32;

/** `User-Agent` of every delivery (spec section 6.3 with the service name Glimpse). */
export const WEBHOOK_USER_AGENT = 'Glimpse-Webhook/1';

/**
 * Signature schemes an endpoint can choose (CONTRACT.md "Webhooks", `signatureScheme`):
 * - `glimpse-v1` (default): the spec's `Webhook-Signature: t=<unix s>,v1=<hex>` (section 6.3), Stripe's scheme;
 * - `standard-webhooks`: `Webhook-Signature: v1,<base64>` as the Standard Webhooks specification defines.
 */
export const SIGNATURE_SCHEMES = ['glimpse-v1', 'standard-webhooks'] as const;
export type SignatureScheme = (typeof SIGNATURE_SCHEMES)[number];

/**
 * A new signing secret: `whsec_` followed by 32 CSPRNG bytes in standard base64 (44 characters), the
 * form Standard Webhooks libraries expect. `glimpse-v1` receivers use the whole string, prefix
 * included, as the HMAC key (as Stripe's verifier does); `standard-webhooks` receivers use the
 * base64-decoded bytes after the prefix.
 */
export function newSigningSecret(): string {
  return SIGNING_SECRET_PREFIX + randomBytes(SIGNING_SECRET_BYTES).toString('base64');
}

/**
 * Whether a secret is usable with `standard-webhooks`: `whsec_` + standard base64 of 32 bytes.
 * Secrets issued before that scheme existed are base64url and must be rotated first.
 */
export function isStandardWebhooksSecret(secret: string): boolean {
  return /^whsec_[A-Za-z0-9+/]{43}=$/.test(secret);
}

/**
 * The `glimpse-v1` signature (spec section 6.3): lower-case hex HMAC-SHA256, keyed with the whole
 * secret string (UTF-8), over `<timestampS>.<body>`; `timestampS` in Unix seconds, `body` the exact bytes sent.
 */
export function computeSignature(secret: string, timestampS: number, body: string): string {
  return createHmac('sha256', secret).update(`${timestampS}.${body}`, 'utf8').digest('hex');
}

/**
 * The `standard-webhooks` signature: base64 HMAC-SHA256 over `<deliveryId>.<timestampS>.<body>`,
 * keyed with the base64-decoded part of the secret after `whsec_` (Standard Webhooks specification,
 * "Signature scheme").
 */
export function computeStandardSignature(secret: string, deliveryId: string, timestampS: number, body: string): string {
  const key = Buffer.from(secret.startsWith(SIGNING_SECRET_PREFIX) ? secret.slice(SIGNING_SECRET_PREFIX.length) : secret, 'base64');
  return createHmac('sha256', key).update(`${deliveryId}.${timestampS}.${body}`, 'utf8').digest('base64');
}

/**
 * The `Webhook-Signature` header value with one signature per valid secret, newest first
 * (CONTRACT.md "Webhooks", rotation with overlap):
 * - `glimpse-v1`: `t=<unix s>,v1=<hex new>[,v1=<hex old>]` (spec section 6.3, the form Stripe's verifier accepts);
 * - `standard-webhooks`: `v1,<base64 new>[ v1,<base64 old>]` (space-separated, per Standard Webhooks).
 * `secrets` must hold at least one secret.
 */
export function signatureHeader(
  scheme: SignatureScheme,
  secrets: readonly string[],
  input: { deliveryId: string; timestampS: number; body: string },
): string {
  if (!secrets.length) throw new Error('signatureHeader needs at least one secret');
  if (scheme === 'standard-webhooks') {
    return secrets.map((s) => `v1,${computeStandardSignature(s, input.deliveryId, input.timestampS, input.body)}`).join(' ');
  }
  return [`t=${input.timestampS}`, ...secrets.map((s) => `v1=${computeSignature(s, input.timestampS, input.body)}`)].join(',');
}

/**
 * Headers of one delivery attempt (spec section 6.3, CONTRACT.md "Webhooks"): a fresh timestamp and
 * signature per attempt, the same `Webhook-Id` (the delivery id) on every attempt. `secrets` are the
 * endpoint's valid signing secrets, newest first.
 */
export function deliveryHeaders(input: {
  deliveryId: string;
  eventType: string;
  scheme: SignatureScheme;
  secrets: readonly string[];
  timestampS: number;
  body: string;
}): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    'User-Agent': WEBHOOK_USER_AGENT,
    'Webhook-Id': input.deliveryId,
    'Webhook-Timestamp': String(input.timestampS),
    'Webhook-Signature': signatureHeader(input.scheme, input.secrets, input),
    'X-Glimpse-Event': input.eventType,
  };
}

/**
 * Whether an endpoint subscribed to `events` receives an event of `type`: `"*"` means every type,
 * including types added later (spec section 6.2).
 */
export function subscribes(events: readonly string[], type: string): boolean {
  return events.includes('*') || events.includes(type);
}

/**
 * Attempts per delivery: the first plus one per configured retry delay (6 with the default
 * `WEBHOOK_RETRY_DELAYS`, spec section 8).
 */
export function maxAttempts(retryDelaysS: readonly number[]): number {
  return retryDelaysS.length + 1;
}

/**
 * Delay before the next attempt after attempt number `failedAttempt` (1-based) failed, in ms, or null
 * when that was the last attempt and the delivery is exhausted (spec sections 3.2 and 8).
 */
export function retryDelayMs(failedAttempt: number, retryDelaysS: readonly number[]): number | null {
  if (failedAttempt < 1 || failedAttempt > retryDelaysS.length) return null;
  return Math.round(retryDelaysS[failedAttempt - 1] * 1000);
}
