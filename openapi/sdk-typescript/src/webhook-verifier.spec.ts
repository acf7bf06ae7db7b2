import { createHmac, randomBytes } from 'node:crypto';
import { verifyWebhook, WebhookVerificationError } from './webhook-verifier';

/** Signs like the service does, written out here so the verifier is checked against the schemes, not itself. */
function signGlimpse(secret: string, t: number, body: string | Buffer): string {
  return createHmac('sha256', secret)
    .update(Buffer.concat([Buffer.from(`${t}.`), Buffer.from(body)]))
    .digest('hex');
}
function signStandard(secret: string, id: string, t: number, body: string): string {
  return createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64'))
    .update(`${id}.${t}.${body}`)
    .digest('base64');
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof WebhookVerificationError) return err.code;
    throw err;
  }
  return 'accepted';
}

const body = JSON.stringify({
  id: 'evt_1',
  type: 'test.ping',
  createdAt: '2026-11-20T12:00:00.000Z',
  data: { endpointId: 'we_1', message: 'hi ✓' },
});
const t = 1_790_000_000;

describe('verifyWebhook, glimpse-v1 (t=…,v1=<hex>)', () => {
  const secret = 'whsec_Yb3kQ2nP8vXw1tR6mL0sA9dF4gH7jK5cZ2xV8bN1mQ0';
  const headers = { 'Webhook-Signature': `t=${t},v1=${signGlimpse(secret, t, body)}` };

  it('returns the parsed event for a valid signature, from a string or bytes, any header case', async () => {
    expect(await verifyWebhook(body, headers, secret, { nowS: t + 10 })).toEqual(JSON.parse(body));
    expect(
      await verifyWebhook(Buffer.from(body), { 'webhook-signature': [headers['Webhook-Signature']] }, secret, { nowS: t }),
    ).toMatchObject({ type: 'test.ping' });
    expect((await verifyWebhook(new TextEncoder().encode(body).buffer, new Headers(headers), secret, { nowS: t })).id).toBe('evt_1');
  });

  it('accepts any of several secrets and any of several v1 signatures', async () => {
    const other = 'whsec_other';
    expect((await verifyWebhook(body, headers, [other, secret], { nowS: t })).id).toBe('evt_1');
    const twoSigs = { 'webhook-signature': `t=${t},v1=${signGlimpse(other, t, body)},v0=zzz,v1=${signGlimpse(secret, t, body)}` };
    expect((await verifyWebhook(body, twoSigs, secret, { nowS: t })).id).toBe('evt_1');
  });

  it('rejects a wrong secret or an altered body with SIGNATURE_MISMATCH', async () => {
    expect(await codeOf(verifyWebhook(body, headers, 'whsec_wrong', { nowS: t }))).toBe('SIGNATURE_MISMATCH');
    expect(await codeOf(verifyWebhook(body.replace('hi', 'ho'), headers, secret, { nowS: t }))).toBe('SIGNATURE_MISMATCH');
    expect(await codeOf(verifyWebhook(JSON.stringify(JSON.parse(body), null, 2), headers, secret, { nowS: t }))).toBe('SIGNATURE_MISMATCH');
  });

  it('enforces the tolerance (default 300 s) both ways, and 0 disables it', async () => {
    expect(await codeOf(verifyWebhook(body, headers, secret, { nowS: t + 300 }))).toBe('accepted');
    expect(await codeOf(verifyWebhook(body, headers, secret, { nowS: t + 301 }))).toBe('TIMESTAMP_OUT_OF_TOLERANCE');
    expect(await codeOf(verifyWebhook(body, headers, secret, { nowS: t - 301 }))).toBe('TIMESTAMP_OUT_OF_TOLERANCE');
    expect(await codeOf(verifyWebhook(body, headers, secret, { toleranceS: 0, nowS: t + 100_000 }))).toBe('accepted');
  });

  it('reports a missing or malformed header', async () => {
    expect(await codeOf(verifyWebhook(body, {}, secret, { nowS: t }))).toBe('MISSING_SIGNATURE');
    expect(await codeOf(verifyWebhook(body, { 'webhook-signature': 'v1=abc' }, secret, { nowS: t }))).toBe('MALFORMED_SIGNATURE');
    expect(await codeOf(verifyWebhook(body, { 'webhook-signature': `t=${t}` }, secret, { nowS: t }))).toBe('MALFORMED_SIGNATURE');
    expect(await codeOf(verifyWebhook(body, { 'webhook-signature': `t=${t},v1=${'g'.repeat(64)}` }, secret, { nowS: t }))).toBe(
      'MALFORMED_SIGNATURE',
    );
  });

  it('reports a signed body that is not an envelope as INVALID_PAYLOAD', async () => {
    const notEnvelope = '{"hello":1}';
    const h = { 'webhook-signature': `t=${t},v1=${signGlimpse(secret, t, notEnvelope)}` };
    expect(await codeOf(verifyWebhook(notEnvelope, h, secret, { nowS: t }))).toBe('INVALID_PAYLOAD');
  });
});

describe('verifyWebhook, standard-webhooks (v1,<base64>)', () => {
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const id = 'dlv_7hT2kP9mQ4xW1vB8nR3sL6cZ';
  const headers = { 'webhook-id': id, 'webhook-timestamp': String(t), 'webhook-signature': `v1,${signStandard(secret, id, t, body)}` };

  it('accepts a valid signature, also beside another secret’s (rotation overlap)', async () => {
    expect(await verifyWebhook(body, headers, secret, { nowS: t })).toEqual(JSON.parse(body));
    const old = `whsec_${randomBytes(32).toString('base64')}`;
    const both = { ...headers, 'webhook-signature': `v1,${signStandard(secret, id, t, body)} v1,${signStandard(old, id, t, body)}` };
    expect((await verifyWebhook(body, both, old, { nowS: t })).id).toBe('evt_1');
  });

  it('binds the signature to the delivery id and timestamp', async () => {
    expect(await codeOf(verifyWebhook(body, { ...headers, 'webhook-id': 'dlv_other' }, secret, { nowS: t }))).toBe('SIGNATURE_MISMATCH');
    expect(await codeOf(verifyWebhook(body, { ...headers, 'webhook-timestamp': String(t + 1) }, secret, { nowS: t }))).toBe(
      'SIGNATURE_MISMATCH',
    );
    expect(await codeOf(verifyWebhook(body, headers, secret, { nowS: t + 301 }))).toBe('TIMESTAMP_OUT_OF_TOLERANCE');
  });

  it('rejects another secret, and a header without Webhook-Id', async () => {
    expect(await codeOf(verifyWebhook(body, headers, `whsec_${randomBytes(32).toString('base64')}`, { nowS: t }))).toBe(
      'SIGNATURE_MISMATCH',
    );
    expect(await codeOf(verifyWebhook(body, { ...headers, 'webhook-id': undefined }, secret, { nowS: t }))).toBe('MALFORMED_SIGNATURE');
  });
});
