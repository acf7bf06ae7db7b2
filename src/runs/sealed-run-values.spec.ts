import { SecretCipher } from '../common/secret-cipher';
import { redactor } from './run-session';
import { openRunValues, sealedRunPayload } from './sealed-run-values';

describe('sensitive run values', () => {
  const cipher = new SecretCipher([Buffer.alloc(32, 7)]);

  it('are sealed in the queue payload (bound to the run id) and open again in the worker', () => {
    const payload = sealedRunPayload(cipher, 'run_a', { 2: 'hunter2 "quoted" secret' });
    expect(JSON.stringify(payload)).not.toContain('hunter2');
    expect(payload.sensitiveValues).toBeUndefined();
    expect(openRunValues(cipher, payload)).toEqual({ 2: 'hunter2 "quoted" secret' });
    // Copied to another run's entry, they do not open.
    expect(() => openRunValues(cipher, { ...payload, runId: 'run_b' })).toThrow();
    // No values, nothing sealed; an entry from before sealing still works.
    expect(sealedRunPayload(cipher, 'run_a', {})).toEqual({ runId: 'run_a' });
    expect(openRunValues(cipher, { runId: 'run_a', sensitiveValues: { 0: 'old' } })).toEqual({ 0: 'old' });
  });

  it('are removed from JSON text where they appear escaped, once or twice (evaluate results)', () => {
    const secret = 'pa"ss\\word';
    const redact = redactor([secret]);
    const result = { echoed: secret, nested: JSON.stringify({ token: secret }) };
    const text = redact(JSON.stringify(result));
    expect(text).not.toContain('pa');
    expect(JSON.parse(text)).toEqual({ echoed: '[redacted]', nested: '{"token":"[redacted]"}' });
  });
});
