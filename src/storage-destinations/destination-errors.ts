import { AnswerTooLargeError } from '../egress/customer-endpoints';
import { DestinationRefusedError } from './guarded-lookup';

/** What S3 error names mean for a customer (the rest are named as they are). */
const S3_ERROR_TEXT: Record<string, string> = {
  InvalidAccessKeyId: 'the access key id is not known to the bucket (InvalidAccessKeyId)',
  SignatureDoesNotMatch: 'the secret access key does not match the access key id (SignatureDoesNotMatch)',
  AccessDenied: 'the credentials may not write to this bucket (AccessDenied)',
  NoSuchBucket: 'the bucket does not exist (NoSuchBucket)',
  PermanentRedirect: 'the bucket is in another region or needs another endpoint (PermanentRedirect)',
  AuthorizationHeaderMalformed: 'the region does not match the bucket (AuthorizationHeaderMalformed)',
};

/** Network error codes worth naming to a customer. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
]);

/**
 * The customer-safe reason an upload or a destination test failed (CONTRACT.md, "Storage
 * destinations"; internal errors never reach a customer): an S3 error by its code and HTTP status,
 * a refusal by the SSRF guard as the guard words it, an answer over the size read from customer
 * endpoints ({@link AnswerTooLargeError}), a network error by its code, a timeout; anything
 * else a generic text. Never a stack, a local path, or an address a name resolved to.
 */
export function describeDestinationError(err: unknown): string {
  const e = err as {
    name?: string;
    code?: string;
    message?: string;
    $metadata?: { httpStatusCode?: number };
    cause?: unknown;
  } | null;
  const refused = findCause(err, (c) => c instanceof DestinationRefusedError);
  if (refused) return (refused as Error).message;
  const tooLarge = findCause(err, (c) => c instanceof AnswerTooLargeError);
  if (tooLarge) return (tooLarge as Error).message;
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError' || e?.code === 'UND_ERR_CONNECT_TIMEOUT') return 'the request timed out';
  const network = findCause(err, (c) => NETWORK_CODES.has((c as { code?: string })?.code ?? ''));
  if (network) return `could not reach the endpoint (${(network as { code: string }).code})`;
  const status = e?.$metadata?.httpStatusCode;
  if (e?.name && status) {
    const text = S3_ERROR_TEXT[e.name] ?? `the bucket answered ${e.name}`;
    return `${text}, HTTP ${status}`;
  }
  if (status) return `the bucket answered HTTP ${status}`;
  return 'the upload could not be completed';
}

/** The first error in `err`'s `cause` chain (itself included) that `match`es. */
function findCause(err: unknown, match: (c: unknown) => boolean): unknown {
  for (let c = err, depth = 0; c && depth < 5; c = (c as { cause?: unknown }).cause, depth++) if (match(c)) return c;
  return null;
}
