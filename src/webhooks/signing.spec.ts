import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import {
  computeSignature,
  deliveryHeaders,
  isStandardWebhooksSecret,
  maxAttempts,
  newSigningSecret,
  retryDelayMs,
  signatureHeader,
  subscribes,
} from './signing';

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
    expect(signatureHeader('glimpse-v1', [secret], { deliveryId: 'dlv_1', timestampS: 1712345678, body })).toBe(expected);
  });

  it('signs non-ASCII bodies over their UTF-8 bytes', () => {
    const stripe = new Stripe('sk_test_unused');
    const unicode = '{"data":{"message":"Grüße — 截图"}}';
    const header = signatureHeader('glimpse-v1', ['whsec_x'], { deliveryId: 'dlv_1', timestampS: 1712345678, body: unicode });
    expect(stripe.webhooks.generateTestHeaderString({ payload: unicode, secret: 'whsec_x', timestamp: 1712345678 })).toBe(header);
  });

  it('generates whsec_ secrets of 32 random bytes (standard base64), different every time', () => {
    const a = newSigningSecret();
    const b = newSigningSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(a.slice(6), 'base64')).toHaveLength(32);
    expect(isStandardWebhooksSecret(a)).toBe(true);
    expect(isStandardWebhooksSecret('whsec_' + 'A-_'.repeat(14) + 'x')).toBe(false);
    expect(a).not.toBe(b);
  });

  it('during a rotation overlap signs with both secrets, newest first, and Stripe accepts either', () => {
    const stripe = new Stripe('sk_test_unused');
    const [newer, older] = [newSigningSecret(), newSigningSecret()];
    const t = Math.floor(Date.now() / 1000);
    const header = signatureHeader('glimpse-v1', [newer, older], { deliveryId: 'dlv_1', timestampS: t, body });
    expect(header).toBe(`t=${t},v1=${computeSignature(newer, t, body)},v1=${computeSignature(older, t, body)}`);
    for (const secret of [newer, older]) expect(stripe.webhooks.constructEvent(body, header, secret)).toEqual(JSON.parse(body));
    expect(() => stripe.webhooks.constructEvent(body, header, newSigningSecret())).toThrow();
  });

  it('signs the standard-webhooks scheme so the standardwebhooks package verifies it, with one or two secrets', () => {
    const [newer, older] = [newSigningSecret(), newSigningSecret()];
    const t = Math.floor(Date.now() / 1000);
    const signature = signatureHeader('standard-webhooks', [newer, older], { deliveryId: 'dlv_1', timestampS: t, body });
    expect(signature).toMatch(/^v1,[A-Za-z0-9+/]{43}= v1,[A-Za-z0-9+/]{43}=$/);
    const headers = { 'webhook-id': 'dlv_1', 'webhook-timestamp': String(t), 'webhook-signature': signature };
    for (const secret of [newer, older]) expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(newSigningSecret()).verify(body, headers)).toThrow();
    // The id is signed: another Webhook-Id does not verify.
    expect(() => new Webhook(newer).verify(body, { ...headers, 'webhook-id': 'dlv_2' })).toThrow();
  });

  it('builds the delivery headers of spec section 6.3', () => {
    const headers = deliveryHeaders({
      deliveryId: 'dlv_1',
      eventType: 'test.ping',
      scheme: 'glimpse-v1',
      secrets: ['whsec_unit_test_secret'],
      timestampS: 1700000000,
      body,
    });
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
