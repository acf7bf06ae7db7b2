/**
 * Rules for endpoints a customer chooses and the service connects to: storage destinations, presigned
 * `upload` URLs, webhook receivers (CONTRACT.md, "Tenancy: fair share and isolation", customer-chosen
 * endpoints). Their connections go through the SSRF guard (`SsrfGuard`); here is how much of an
 * answer is read and how often a test may be asked for.
 */

/**
 * Largest answer read from a customer-chosen endpoint (a storage destination's S3 endpoint, a presigned
 * `upload` URL), bytes: 1 MiB (CONTRACT.md, "Tenancy: fair share and isolation", customer-chosen
 * endpoints). Webhook receivers are read to less (CONTRACT.md, "Webhooks": 64 KiB).
 */
export const CUSTOMER_ANSWER_MAX_BYTES = 1024 * 1024;

/**
 * A test request to a customer-chosen endpoint (`POST /v1/webhooks/:id/test`,
 * `POST /v1/storage-destinations/:id/test`): at most 10 per endpoint per minute (CONTRACT.md, "Tenancy:
 * fair share and isolation" and "Organizations and plan limits"), counted per endpoint id by one
 * `PostgresRateLimiter` of this name (ids of different kinds never collide: `whk_…`, `dst_…`).
 */
export const ENDPOINT_TEST_LIMIT = { name: 'endpoint-test', points: 10, durationS: 60 } as const;

/** A customer-chosen endpoint answered more than the bytes read from it; `message` is customer-safe. */
export class AnswerTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`the endpoint's answer was larger than ${sizeText(maxBytes)}`);
    this.name = 'AnswerTooLargeError';
  }
}

/** A response body being read: a Node stream (`http.IncomingMessage`, undici's body). */
export interface AnswerBody extends AsyncIterable<Uint8Array | string> {
  destroy(error?: Error): unknown;
  on(event: 'error', listener: (err: Error) => void): unknown;
  readonly readableEnded?: boolean;
}

/** What {@link readAtMost} read. */
export interface BoundedAnswer {
  /** The body's first bytes, at most `maxBytes`. */
  bytes: Buffer;
  /** True when the body had more than `maxBytes` (it was not read to its end). */
  overflowed: boolean;
}

/**
 * Reads a customer endpoint's answer `body` to at most `maxBytes` bytes (CONTRACT.md, "Tenancy: fair
 * share and isolation", customer-chosen endpoints), then stops: a body that goes on is destroyed, which
 * closes its connection (it is never handed back to a keep-alive pool), so an endpoint that answers
 * forever costs at most `maxBytes` (plus one chunk, ≤ 64 KiB) of memory. Reading also stops when
 * `signal` aborts (the caller's deadline: a body that trickles forever is bounded in time too).
 *
 * Resolves with the bytes read and whether there were more. Rejects with the stream's error, or with
 * `signal`'s reason when it aborted first; in every case the stream is destroyed before this settles
 * unless it ended.
 */
export async function readAtMost(body: AnswerBody, maxBytes: number, signal?: AbortSignal): Promise<BoundedAnswer> {
  const chunks: Buffer[] = [];
  let length = 0;
  let overflowed = false;
  // Iteration would otherwise throw an unhandled 'error' once the stream is destroyed below.
  body.on('error', () => undefined);
  const abort = () => body.destroy(signalError(signal!));
  if (signal?.aborted) abort();
  else signal?.addEventListener('abort', abort, { once: true });
  try {
    for await (const chunk of body) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      if (length + bytes.length > maxBytes) {
        chunks.push(bytes.subarray(0, maxBytes - length));
        length = maxBytes;
        overflowed = true;
        break;
      }
      chunks.push(bytes);
      length += bytes.length;
    }
  } catch (err) {
    throw signal?.aborted ? signalError(signal) : err;
  } finally {
    signal?.removeEventListener('abort', abort);
    // Leaving a `for await` early destroys the stream already; an error or abort may not have.
    if (!body.readableEnded) body.destroy();
  }
  return { bytes: Buffer.concat(chunks, length), overflowed };
}

/** The reason `signal` aborted, as an Error (`AbortSignal.timeout` gives a `TimeoutError` DOMException). */
function signalError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : Object.assign(new Error('The operation was aborted'), { name: 'AbortError' });
}

/** `1 MiB`, `64 KiB`, or bytes. */
function sizeText(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}
