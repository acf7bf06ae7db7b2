import { backOff } from 'exponential-backoff';
import { Agent, request } from 'undici';
import { AnswerTooLargeError, CUSTOMER_ANSWER_MAX_BYTES, readAtMost } from '../egress/customer-endpoints';
import type { SsrfGuard } from '../egress/ssrf-guard';
import { describeDestinationError } from './destination-errors';
import { guardedLookup } from './guarded-lookup';

/** Attempts of a presigned `PUT`: the first and two retries, on network errors and 5xx answers. */
const MAX_ATTEMPTS = 3;
/** Wait before the first retry, ms (doubled for the next, with full jitter). */
const FIRST_RETRY_DELAY_MS = 250;
/** Longest one attempt may take, ms, its answer's body included (three, with the back-off: about a minute at most). */
const ATTEMPT_TIMEOUT_MS = 20_000;

/** A presigned `PUT` that failed; `message` is customer-safe. */
export class PresignedUploadError extends Error {
  constructor(
    message: string,
    /** Whether trying again may help (a network error or a 5xx answer). */
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

/**
 * Sends `data` with one `PUT` to a customer's presigned URL (CONTRACT.md, "Storage destinations":
 * `upload`), through the SSRF guard ({@link guardedLookup}: the connection goes to the checked address).
 * `headers` are the customer's (they win over the `Content-Type` set here). Redirects are not followed.
 * A 2xx answer counts once its body has ended within the attempt's time and within
 * {@link CUSTOMER_ANSWER_MAX_BYTES} ({@link readAtMost}; CONTRACT.md, "Tenancy: fair share and
 * isolation"): a longer one is closed and fails the upload, not retried. Retries network errors,
 * timeouts and 5xx answers with exponential back-off; returns the `ETag` answered (or null). Throws
 * {@link PresignedUploadError} for a non-2xx or too large answer, or when every attempt failed.
 */
export async function presignedPut(
  guard: SsrfGuard,
  url: string,
  data: Buffer,
  contentType: string,
  headers: Record<string, string> = {},
): Promise<string | null> {
  const agent = new Agent({ connect: { lookup: guardedLookup(guard) } });
  try {
    return await backOff(() => putOnce(agent, url, data, { 'content-type': contentType, ...lowerCased(headers) }), {
      numOfAttempts: MAX_ATTEMPTS,
      startingDelay: FIRST_RETRY_DELAY_MS,
      jitter: 'full',
      retry: (err: unknown) => err instanceof PresignedUploadError && err.retryable,
    });
  } finally {
    await agent.destroy().catch(() => undefined);
  }
}

async function putOnce(agent: Agent, url: string, data: Buffer, headers: Record<string, string>): Promise<string | null> {
  let res: Awaited<ReturnType<typeof request>>;
  const signal = AbortSignal.timeout(ATTEMPT_TIMEOUT_MS);
  try {
    res = await request(url, { method: 'PUT', body: data, headers, dispatcher: agent, signal });
    if (res.statusCode >= 200 && res.statusCode < 300) {
      if ((await readAtMost(res.body, CUSTOMER_ANSWER_MAX_BYTES, signal)).overflowed)
        throw new AnswerTooLargeError(CUSTOMER_ANSWER_MAX_BYTES);
      const etag = res.headers.etag;
      return typeof etag === 'string' ? etag : null;
    }
  } catch (err) {
    const reason = describeDestinationError(err);
    throw new PresignedUploadError(reason, !reason.startsWith('Target not allowed') && !(err instanceof AnswerTooLargeError));
  }
  res.body.on('error', () => undefined);
  res.body.destroy();
  const redirect = res.statusCode >= 300 && res.statusCode < 400 ? ' (redirects are not followed)' : '';
  throw new PresignedUploadError(`the upload URL answered HTTP ${res.statusCode}${redirect}`, res.statusCode >= 500);
}

function lowerCased(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}
