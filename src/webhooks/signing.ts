import { createHmac, randomBytes } from 'node:crypto';

/** Prefix of every webhook signing secret (CONTRACT.md, "Webhooks"). */
export const SIGNING_SECRET_PREFIX = 'whsec_';

/** Random bytes behind a signing secret (CONTRACT.md: at least 32). */
export const SIGNING_SECRET_BYTES = 32;

/** `User-Agent` of every delivery (spec section 6.3 with the service name Glimpse). */
export const WEBHOOK_USER_AGENT = 'Glimpse-Webhook/1';

/**
 * A new signing secret: `whsec_` followed by 32 CSPRNG bytes in base64url (43 characters).
 * Receivers use the whole string, prefix included, as the HMAC key (as Stripe's verifier does).
 */
export function newSigningSecret(): string {
  return SIGNING_SECRET_PREFIX + randomBytes(SIGNING_SECRET_BYTES).toString('base64url');
}

/**
 * The `v1` signature (spec section 6.3): lower-case hex HMAC-SHA256, keyed with the whole secret
 * string (UTF-8), over `<timestampS>.<body>`; `timestampS` in Unix seconds, `body` the exact bytes sent.
 */
export function computeSignature(secret: string, timestampS: number, body: string): string {
  return createHmac('sha256', secret).update(`${timestampS}.${body}`, 'utf8').digest('hex');
}

/** The `Webhook-Signature` header value `t=<unix seconds>,v1=<hex>` (spec section 6.3, Stripe's scheme). */
export function signatureHeader(secret: string, timestampS: number, body: string): string {
  return `t=${timestampS},v1=${computeSignature(secret, timestampS, body)}`;
}

/**
 * Headers of one delivery attempt (spec section 6.3, CONTRACT.md "Webhooks"): a fresh timestamp and
 * signature per attempt, the same `Webhook-Id` (the delivery id) on every attempt.
 */
export function deliveryHeaders(input: {
  deliveryId: string;
  eventType: string;
  secret: string;
  timestampS: number;
  body: string;
}): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    'User-Agent': WEBHOOK_USER_AGENT,
    'Webhook-Id': input.deliveryId,
    'Webhook-Timestamp': String(input.timestampS),
    'Webhook-Signature': signatureHeader(input.secret, input.timestampS, input.body),
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
