import { createHmac } from 'node:crypto';
import { verifyWebhook, WebhookVerificationError } from './webhook-verifier';

/** Signs like the service does, written out here so the verifier is checked against the scheme, not itself. */
function sign(secret: string, t: number, body: string | Buffer): string {
  return createHmac('sha256', secret).update(Buffer.concat([Buffer.from(`${t}.`), Buffer.from(body)])).digest('hex');
}

describe('verifyWebhook', () => {
  const secret = 'whsec_Yb3kQ2nP8vXw1tR6mL0sA9dF4gH7jK5cZ2xV8bN1mQ0';
  const body = JSON.stringify({ id: 'evt_1', type: 'test.ping', createdAt: '2026-11-20T12:00:00.000Z', data: { endpointId: 'we_1', message: 'hi ✓' } });
  const t = 1_790_000_000;
  const headers = { 'Webhook-Signature': `t=${t},v1=${sign(secret, t, body)}` };

  function codeOf(fn: () => unknown): string {
    try {
      fn();
    } catch (err) {
      if (err instanceof WebhookVerificationError) return err.code;
      throw err;
    }
    return 'accepted';
  }

  it('returns the parsed event for a valid signature, from a string or bytes, any header case', () => {
    expect(verifyWebhook(body, headers, secret, 300, t + 10)).toEqual(JSON.parse(body));
    expect(verifyWebhook(Buffer.from(body), { 'webhook-signature': [headers['Webhook-Signature']] }, secret, 300, t)).toMatchObject({ type: 'test.ping' });
    expect(verifyWebhook(new TextEncoder().encode(body), new Headers(headers), secret, 300, t).id).toBe('evt_1');
  });

  it('accepts any of several secrets and any of several v1 signatures', () => {
    const other = 'whsec_other';
    expect(verifyWebhook(body, headers, [other, secret], 300, t).id).toBe('evt_1');
    const twoSigs = { 'webhook-signature': `t=${t},v1=${sign(other, t, body)},v0=zzz,v1=${sign(secret, t, body)}` };
    expect(verifyWebhook(body, twoSigs, secret, 300, t).id).toBe('evt_1');
  });

  it('rejects a wrong secret or an altered body with SIGNATURE_MISMATCH', () => {
    expect(codeOf(() => verifyWebhook(body, headers, 'whsec_wrong', 300, t))).toBe('SIGNATURE_MISMATCH');
    expect(codeOf(() => verifyWebhook(body.replace('hi', 'ho'), headers, secret, 300, t))).toBe('SIGNATURE_MISMATCH');
    expect(codeOf(() => verifyWebhook(JSON.stringify(JSON.parse(body), null, 2), headers, secret, 300, t))).toBe('SIGNATURE_MISMATCH');
  });

  it('enforces the tolerance (default 300 s) both ways, and 0 disables it', () => {
    expect(codeOf(() => verifyWebhook(body, headers, secret, undefined, t + 300))).toBe('accepted');
    expect(codeOf(() => verifyWebhook(body, headers, secret, undefined, t + 301))).toBe('TIMESTAMP_OUT_OF_TOLERANCE');
    expect(codeOf(() => verifyWebhook(body, headers, secret, undefined, t - 301))).toBe('TIMESTAMP_OUT_OF_TOLERANCE');
    expect(codeOf(() => verifyWebhook(body, headers, secret, 0, t + 100_000))).toBe('accepted');
  });

  it('reports a missing or malformed header', () => {
    expect(codeOf(() => verifyWebhook(body, {}, secret, 300, t))).toBe('MISSING_SIGNATURE');
    expect(codeOf(() => verifyWebhook(body, { 'webhook-signature': 'v1=abc' }, secret, 300, t))).toBe('MALFORMED_SIGNATURE');
    expect(codeOf(() => verifyWebhook(body, { 'webhook-signature': `t=${t}` }, secret, 300, t))).toBe('MALFORMED_SIGNATURE');
    expect(codeOf(() => verifyWebhook(body, { 'webhook-signature': `t=${t},v1=${'g'.repeat(64)}` }, secret, 300, t))).toBe('MALFORMED_SIGNATURE');
  });

  it('reports a signed body that is not an envelope as INVALID_PAYLOAD', () => {
    const notEnvelope = '{"hello":1}';
    const h = { 'webhook-signature': `t=${t},v1=${sign(secret, t, notEnvelope)}` };
    expect(codeOf(() => verifyWebhook(notEnvelope, h, secret, 300, t))).toBe('INVALID_PAYLOAD');
  });
});
