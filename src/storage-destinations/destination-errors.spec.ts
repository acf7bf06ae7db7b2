import { describeDestinationError } from './destination-errors';
import { DestinationRefusedError } from './guarded-lookup';

/** An error shaped as `@aws-sdk/client-s3` throws them for an S3 error answer. */
function s3Error(name: string, status: number, message = 'internal detail /var/lib/x'): Error {
  return Object.assign(new Error(message), { name, $metadata: { httpStatusCode: status } });
}

describe('describeDestinationError (customer-safe reasons, CONTRACT.md "Storage destinations")', () => {
  it('names S3 errors by code and status, never by their message', () => {
    expect(describeDestinationError(s3Error('InvalidAccessKeyId', 403))).toBe(
      'the access key id is not known to the bucket (InvalidAccessKeyId), HTTP 403',
    );
    expect(describeDestinationError(s3Error('NoSuchBucket', 404))).toBe('the bucket does not exist (NoSuchBucket), HTTP 404');
    expect(describeDestinationError(s3Error('SlowDown', 503))).toBe('the bucket answered SlowDown, HTTP 503');
    expect(describeDestinationError(s3Error('SlowDown', 503))).not.toContain('/var/lib');
  });

  it('names network errors by their code, also when wrapped', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 10.0.0.7:9000'), { code: 'ECONNREFUSED' });
    expect(describeDestinationError(refused)).toBe('could not reach the endpoint (ECONNREFUSED)');
    expect(describeDestinationError(new Error('fetch failed', { cause: refused }))).toBe('could not reach the endpoint (ECONNREFUSED)');
  });

  it("passes the SSRF guard's refusal on as the guard words it", () => {
    const refusal = new DestinationRefusedError('Target not allowed: minio.internal resolves to a blocked address (private)');
    expect(describeDestinationError(new Error('socket', { cause: refusal }))).toBe(refusal.message);
  });

  it('says timed out for timeouts and aborts, and something generic for anything else', () => {
    expect(describeDestinationError(Object.assign(new Error('x'), { name: 'TimeoutError' }))).toBe('the request timed out');
    expect(describeDestinationError(Object.assign(new Error('x'), { name: 'AbortError' }))).toBe('the request timed out');
    expect(describeDestinationError(new Error('SELECT * FROM secrets'))).toBe('the upload could not be completed');
  });
});
