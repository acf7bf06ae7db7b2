import type { S3Client } from '@aws-sdk/client-s3';
import type { NodeHttpHandler } from '@smithy/node-http-handler';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { AnswerBody, AnswerTooLargeError, CUSTOMER_ANSWER_MAX_BYTES, readAtMost } from '../egress/customer-endpoints';
import type { SsrfGuard } from '../egress/ssrf-guard';
import { guardedLookup } from './guarded-lookup';

/** Where and as whom to write: a destination with its credentials opened. */
export interface BucketTarget {
  bucket: string;
  region: string;
  endpoint: string | null;
  forcePathStyle: boolean;
  accessKeyId: string;
  secretAccessKey: string;
}

/** How hard a {@link BucketClient} tries. */
export interface BucketClientLimits {
  /** Attempts per request (the SDK's standard retry: exponential back-off with jitter, on throttling, 5xx and network errors). */
  maxAttempts: number;
  /** Longest one attempt may take, ms: connecting, sending, the answer and its body (a timed-out attempt is retried). */
  requestTimeoutMs: number;
  /** Aborts every request of the client when it fires (the caller's overall deadline). */
  signal: AbortSignal;
}

/** The AWS SDK's S3 client module, loaded by {@link BucketClient.open}. */
type S3Sdk = typeof import('@aws-sdk/client-s3');
/** The SDK's HTTP transport module (a dependency of the S3 client), loaded with it. */
type HttpHandlerModule = typeof import('@smithy/node-http-handler');

/** Longest wait for a connection, ms. */
const CONNECTION_TIMEOUT_MS = 5_000;

/**
 * Writes objects to a customer's S3-compatible bucket with `@aws-sdk/client-s3` (CONTRACT.md,
 * "Storage destinations"). Every connection resolves its host through the SSRF guard and dials only
 * the checked address ({@link guardedLookup}), for a custom endpoint and for AWS's virtual-hosted
 * bucket names alike; every answer is read to at most {@link CUSTOMER_ANSWER_MAX_BYTES} within the
 * attempt's time ({@link BoundedAnswerHandler}). Failures throw the SDK's errors, or an
 * {@link AnswerTooLargeError}; {@link describeDestinationError} words them for customers. Open one
 * with {@link BucketClient.open}; call {@link close} when done.
 */
export class BucketClient {
  private readonly client: S3Client;
  private readonly agents: [HttpAgent, HttpsAgent];

  private constructor(
    private readonly sdk: S3Sdk,
    http: HttpHandlerModule,
    private readonly target: BucketTarget,
    guard: SsrfGuard,
    private readonly limits: BucketClientLimits,
  ) {
    const lookup = guardedLookup(guard);
    this.agents = [new HttpAgent({ lookup, keepAlive: true }), new HttpsAgent({ lookup, keepAlive: true })];
    const transport = new http.NodeHttpHandler({
      httpAgent: this.agents[0],
      httpsAgent: this.agents[1],
      connectionTimeout: CONNECTION_TIMEOUT_MS,
    });
    this.client = new sdk.S3Client({
      region: target.region,
      endpoint: target.endpoint ?? undefined,
      forcePathStyle: target.forcePathStyle,
      credentials: { accessKeyId: target.accessKeyId, secretAccessKey: target.secretAccessKey },
      maxAttempts: limits.maxAttempts,
      requestHandler: new BoundedAnswerHandler(transport, limits.requestTimeoutMs),
    });
  }

  /**
   * A client for `target`. The AWS SDK is loaded on the first call, so a process whose accounts have no
   * storage destination never loads it (docs/performance.md, "Boot").
   */
  static async open(target: BucketTarget, guard: SsrfGuard, limits: BucketClientLimits): Promise<BucketClient> {
    const [sdk, http] = await Promise.all([import('@aws-sdk/client-s3'), import('@smithy/node-http-handler')]);
    return new BucketClient(sdk, http, target, guard, limits);
  }

  /** Writes `data` at `key`; returns the ETag the bucket answered (quoted, as sent), or null. */
  async put(key: string, data: Buffer, contentType: string): Promise<string | null> {
    const answer = await this.client.send(
      new this.sdk.PutObjectCommand({
        Bucket: this.target.bucket,
        Key: key,
        Body: data,
        ContentType: contentType,
        ContentLength: data.length,
      }),
      { abortSignal: this.limits.signal },
    );
    return answer.ETag ?? null;
  }

  /** Deletes the object at `key` (no error when it does not exist). */
  async delete(key: string): Promise<void> {
    await this.client.send(new this.sdk.DeleteObjectCommand({ Bucket: this.target.bucket, Key: key }), { abortSignal: this.limits.signal });
  }

  close(): void {
    this.client.destroy();
    for (const agent of this.agents) agent.destroy();
  }
}

type HandleArguments = Parameters<NodeHttpHandler['handle']>;

/**
 * The S3 client's transport for customer buckets: the SDK's own `NodeHttpHandler` (its agents dial only
 * SSRF-checked addresses), with every answer read here to at most {@link CUSTOMER_ANSWER_MAX_BYTES}
 * ({@link readAtMost}) before the SDK parses it (CONTRACT.md, "Tenancy: fair share and isolation",
 * customer-chosen endpoints). An endpoint that answers more fails the request with an
 * {@link AnswerTooLargeError} and its connection is closed; one attempt (connecting, sending, the answer
 * and its body) lasts at most `attemptMs`, else it fails with a `TimeoutError` (which the SDK retries).
 * The body handed on is the bytes read: `PutObject` and `DeleteObject` answers are small.
 */
class BoundedAnswerHandler {
  readonly metadata: NodeHttpHandler['metadata'];

  constructor(
    private readonly inner: NodeHttpHandler,
    private readonly attemptMs: number,
  ) {
    this.metadata = inner.metadata;
  }

  async handle(request: HandleArguments[0], options: HandleArguments[1] = {}): ReturnType<NodeHttpHandler['handle']> {
    const deadline = AbortSignal.timeout(this.attemptMs);
    const caller = options.abortSignal as AbortSignal | undefined;
    const signal = caller ? AbortSignal.any([caller, deadline]) : deadline;
    try {
      const { response } = await this.inner.handle(request, { ...options, abortSignal: signal });
      const { bytes, overflowed } = await readAtMost(response.body as AnswerBody, CUSTOMER_ANSWER_MAX_BYTES, signal);
      if (overflowed) throw new AnswerTooLargeError(CUSTOMER_ANSWER_MAX_BYTES);
      response.body = bytes;
      return { response };
    } catch (err) {
      if (deadline.aborted && !caller?.aborted)
        throw Object.assign(new Error('the request timed out'), { name: 'TimeoutError', cause: err });
      throw err;
    }
  }

  updateHttpClientConfig(...args: Parameters<NodeHttpHandler['updateHttpClientConfig']>): void {
    this.inner.updateHttpClientConfig(...args);
  }

  httpHandlerConfigs(): ReturnType<NodeHttpHandler['httpHandlerConfigs']> {
    return this.inner.httpHandlerConfigs();
  }

  destroy(): void {
    this.inner.destroy();
  }
}
