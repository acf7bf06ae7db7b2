import Stripe from 'stripe';
import { computeSignature, deliveryHeaders, maxAttempts, newSigningSecret, retryDelayMs, signatureHeader, subscribes } from './signing';

describe('webhook signing', () => {
  const body = '{"id":"evt_1","type":"test.ping"}';

  it('matches an HMAC-SHA256 computed by openssl over "<t>.<body>" keyed with the whole secret', () => {
    // printf '%s' '1700000000.{"id":"evt_1","type":"test.ping"}' | openssl dgst -sha256 -hmac 'whsec_unit_test_secret'
    expect(computeSignature('whsec_unit_test_secret', 1700000000, body)).toBe(
      '46e40993d29edb6cc92640758d5663c4158b1ec55917a9fa675a7d70de8c8075',
    );
  });

  it('writes the header exactly as Stripe does for the same secret, timestamp and payload', () => {
    const stripe = new Stripe('sk_test_unused');
    const secret = newSigningSecret();
    const expected = stripe.webhooks.generateTestHeaderString({ payload: body, secret, timestamp: 1712345678 });
    expect(signatureHeader(secret, 1712345678, body)).toBe(expected);
  });

  it('signs non-ASCII bodies over their UTF-8 bytes', () => {
    const stripe = new Stripe('sk_test_unused');
    const unicode = '{"data":{"message":"Grüße — 截图"}}';
    const header = signatureHeader('whsec_x', 1712345678, unicode);
    expect(stripe.webhooks.generateTestHeaderString({ payload: unicode, secret: 'whsec_x', timestamp: 1712345678 })).toBe(header);
  });

  it('generates whsec_ secrets of 32 random bytes (base64url), different every time', () => {
    const a = newSigningSecret();
    const b = newSigningSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(a.slice(6), 'base64url')).toHaveLength(32);
    expect(a).not.toBe(b);
  });

  it('builds the delivery headers of spec section 6.3', () => {
    const headers = deliveryHeaders({ deliveryId: 'dlv_1', eventType: 'test.ping', secret: 'whsec_unit_test_secret', timestampS: 1700000000, body });
    expect(headers).toEqual({
      'Content-Type': 'application/json',
      'User-Agent': 'Glimpse-Webhook/1',
      'Webhook-Id': 'dlv_1',
      'Webhook-Timestamp': '1700000000',
      'Webhook-Signature': 't=1700000000,v1=46e40993d29edb6cc92640758d5663c4158b1ec55917a9fa675a7d70de8c8075',
      'X-Glimpse-Event': 'test.ping',
    });
  });

  it('subscribes an endpoint to its listed types, and to everything with "*"', () => {
    expect(subscribes(['screenshot.completed'], 'screenshot.completed')).toBe(true);
    expect(subscribes(['screenshot.completed'], 'screenshot.failed')).toBe(false);
    expect(subscribes(['*'], 'some.future.type')).toBe(true);
  });

  it('schedules the retries with the configured delays, then exhausts after attempts = delays + 1', () => {
    const delays = [60, 300, 1800, 7200, 43200];
    expect(maxAttempts(delays)).toBe(6);
    expect([1, 2, 3, 4, 5].map((n) => retryDelayMs(n, delays))).toEqual([60_000, 300_000, 1_800_000, 7_200_000, 43_200_000]);
    expect(retryDelayMs(6, delays)).toBeNull();
    expect(retryDelayMs(1, [0.25])).toBe(250);
  });
});
