/**
 * Verifies Glimpse webhook deliveries on the receiver's side. Standalone: depends on `node:crypto` only.
 *
 * A delivery is an HTTP POST whose raw body is the JSON event envelope `{ id, type, createdAt, data }`,
 * with the headers `Webhook-Id` (delivery id, the same on every retry: deduplicate on it),
 * `Webhook-Timestamp`, `Webhook-Signature: t=<unix seconds>,v1=<hex>` and `X-Glimpse-Event`.
 * `v1` is the lower-case hex HMAC-SHA256, keyed with the endpoint's whole signing secret (`whsec_…`,
 * as UTF-8), over `<t>.<raw body>`. It is Stripe's scheme, so Stripe's verifier accepts it as well.
 *
 * @example
 * ```ts
 * import express from 'express';
 * import { verifyWebhook, WebhookVerificationError } from './webhook-verifier';
 *
 * app.post('/hooks/glimpse', express.raw({ type: 'application/json' }), (req, res) => {
 *   try {
 *     const event = verifyWebhook(req.body, req.headers, process.env.GLIMPSE_WEBHOOK_SECRET!);
 *     if (event.type === 'screenshot.completed') queueDownload(event.data.publicUrl);
 *     res.sendStatus(204);
 *   } catch (err) {
 *     if (err instanceof WebhookVerificationError) return res.status(400).send(err.code);
 *     throw err;
 *   }
 * });
 * ```
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Largest accepted difference between the signature's timestamp and the receiver's clock, s (spec 6.3). */
export const DEFAULT_TOLERANCE_S = 300;

/** Why a delivery was rejected. */
export type WebhookVerificationErrorCode =
  /** No `Webhook-Signature` header. */
  | 'MISSING_SIGNATURE'
  /** The header is not `t=<digits>,v1=<hex>[,v1=<hex>…]`. */
  | 'MALFORMED_SIGNATURE'
  /** `t` differs from the receiver's clock by more than the tolerance (a replay, or a skewed clock). */
  | 'TIMESTAMP_OUT_OF_TOLERANCE'
  /** No `v1` signature matches any of the given secrets (wrong secret, or the body was altered). */
  | 'SIGNATURE_MISMATCH'
  /** Correctly signed, but the body is not an event envelope. */
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

/** `data` of `screenshot.completed`. */
export interface ScreenshotCompletedData {
  screenshotId: string;
  url: string;
  publicUrl: string;
  format: 'png' | 'jpeg' | 'webp' | 'pdf';
  width: number;
  height: number;
  fullPage: boolean;
  /** True when a full-page capture was cut at the height cap (16,384 px). */
  clipped: boolean;
}

/** `data` of `screenshot.failed`. */
export interface ScreenshotFailedData {
  screenshotId: string;
  url: string;
  error: string;
}

/** `data` of `run.completed` (browser session runs). */
export interface RunCompletedData {
  runId: string;
  status: 'completed';
  finalUrl: string;
  pageTitle: string;
  videoUrl: string | null;
  consoleErrorCount: number;
  networkErrorCount: number;
  stepCount: number;
  /** ms */
  durationMs: number;
}

/** `data` of `run.failed`. */
export interface RunFailedData extends Omit<RunCompletedData, 'status' | 'finalUrl' | 'pageTitle'> {
  status: 'failed';
  finalUrl: string | null;
  pageTitle: string | null;
  finalizationError: string;
}

/** `data` of `quota.warning`. */
export interface QuotaWarningData {
  threshold: number;
  used: number;
  limit: number;
  remaining: number;
  resetAt: string;
  apiKeyId: string;
}

/** `data` of `test.ping`. */
export interface TestPingData {
  endpointId: string;
  message: string;
}

/** `data` of `endpoint.disabled`: another endpoint of the account was disabled after failing for days. */
export interface EndpointDisabledData {
  endpointId: string;
  url: string;
  reason: 'failing';
  disabledAt: string;
}

interface Envelope<T extends string, D> {
  /** Event id (`evt_…`). */
  id: string;
  type: T;
  /** ISO 8601 UTC with milliseconds. */
  createdAt: string;
  data: D;
}

/**
 * A verified event. Switch on `type`; types not listed here may arrive as the service grows:
 * ignore them (spec section 6.2).
 */
export type WebhookEvent =
  | Envelope<'screenshot.completed', ScreenshotCompletedData>
  | Envelope<'screenshot.failed', ScreenshotFailedData>
  | Envelope<'run.completed', RunCompletedData>
  | Envelope<'run.failed', RunFailedData>
  | Envelope<'quota.warning', QuotaWarningData>
  | Envelope<'test.ping', TestPingData>
  | Envelope<'endpoint.disabled', EndpointDisabledData>;

/** Request headers: a fetch `Headers`, or a plain object such as Node's `req.headers` (any case). */
export type WebhookHeaders = { get(name: string): string | null } | Record<string, string | string[] | undefined>;

/**
 * Verifies one delivery and returns its event.
 *
 * @param rawBody the request body exactly as received (bytes or the undecoded string); a re-serialised
 *   JSON object does not verify.
 * @param headers the request headers; `Webhook-Signature` is required.
 * @param secret the endpoint's signing secret, or several (for example the old and the new one while
 *   a rotation rolls out): any match is accepted.
 * @param toleranceS largest accepted age (or lead) of the signature's timestamp, in seconds; default
 *   300. 0 disables the check (not recommended).
 * @param nowS the receiver's clock in Unix seconds (for tests).
 * @throws WebhookVerificationError with a {@link WebhookVerificationErrorCode}.
 */
export function verifyWebhook(
  rawBody: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string | readonly string[],
  toleranceS: number = DEFAULT_TOLERANCE_S,
  nowS: number = Math.floor(Date.now() / 1000),
): WebhookEvent {
  const header = headerValue(headers, 'webhook-signature');
  if (!header) throw new WebhookVerificationError('MISSING_SIGNATURE', 'Webhook-Signature header is missing');
  const { timestamp, signatures } = parseSignatureHeader(header);
  if (toleranceS > 0 && Math.abs(nowS - timestamp) > toleranceS) {
    throw new WebhookVerificationError(
      'TIMESTAMP_OUT_OF_TOLERANCE',
      `signature timestamp ${timestamp} is more than ${toleranceS} s away from now (${nowS})`,
    );
  }
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : Buffer.from(rawBody);
  const secrets = typeof secret === 'string' ? [secret] : [...secret];
  if (!secrets.length || secrets.some((s) => typeof s !== 'string' || !s)) {
    throw new TypeError('verifyWebhook: secret must be a non-empty string or array of strings');
  }
  let matched = false;
  for (const candidateSecret of secrets) {
    const expected = createHmac('sha256', candidateSecret).update(`${timestamp}.`, 'utf8').update(body).digest();
    // Every comparison runs (no early exit), each in constant time.
    for (const signature of signatures) if (timingSafeEqual(expected, signature)) matched = true;
  }
  if (!matched) throw new WebhookVerificationError('SIGNATURE_MISMATCH', 'no v1 signature matches the secret');
  let event: unknown;
  try {
    event = JSON.parse(body.toString('utf8'));
  } catch {
    throw new WebhookVerificationError('INVALID_PAYLOAD', 'body is not JSON');
  }
  const e = event as Partial<Record<'id' | 'type' | 'createdAt' | 'data', unknown>> | null;
  if (!e || typeof e !== 'object' || typeof e.id !== 'string' || typeof e.type !== 'string' || typeof e.createdAt !== 'string' || typeof e.data !== 'object' || e.data === null) {
    throw new WebhookVerificationError('INVALID_PAYLOAD', 'body is not an event envelope { id, type, createdAt, data }');
  }
  return event as WebhookEvent;
}

/**
 * Parses `t=<unix seconds>,v1=<64 hex>[,v1=…]`; other schemes are ignored (forward compatibility).
 * Throws `MALFORMED_SIGNATURE` when `t` or every `v1` is missing or invalid.
 */
function parseSignatureHeader(header: string): { timestamp: number; signatures: Buffer[] } {
  let timestamp: number | null = null;
  const signatures: Buffer[] = [];
  for (const part of header.split(',')) {
    const at = part.indexOf('=');
    if (at < 0) continue;
    const key = part.slice(0, at).trim();
    const value = part.slice(at + 1).trim();
    if (key === 't' && /^\d{1,12}$/.test(value)) timestamp = Number(value);
    if (key === 'v1' && /^[0-9a-fA-F]{64}$/.test(value)) signatures.push(Buffer.from(value, 'hex'));
  }
  if (timestamp === null || !signatures.length) {
    throw new WebhookVerificationError('MALFORMED_SIGNATURE', 'Webhook-Signature must look like t=<unix seconds>,v1=<hex HMAC-SHA256>');
  }
  return { timestamp, signatures };
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
