import type { S3Client } from '@aws-sdk/client-s3';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
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
  /** Longest wait for an answer once connected, ms (per attempt). */
  requestTimeoutMs: number;
  /** Aborts every request of the client when it fires (the caller's overall deadline). */
  signal: AbortSignal;
}

/** The AWS SDK's S3 client module, loaded by {@link BucketClient.open}. */
type S3Sdk = typeof import('@aws-sdk/client-s3');

/** Longest wait for a connection, ms. */
const CONNECTION_TIMEOUT_MS = 5_000;

/**
 * Writes objects to a customer's S3-compatible bucket with `@aws-sdk/client-s3` (CONTRACT.md,
 * "Storage destinations"). Every connection resolves its host through the SSRF guard and dials only
 * the checked address ({@link guardedLookup}), for a custom endpoint and for AWS's virtual-hosted
 * bucket names alike. Failures throw the SDK's errors; {@link describeDestinationError} words them
 * for customers. Open one with {@link BucketClient.open}; call {@link close} when done.
 */
export class BucketClient {
  private readonly client: S3Client;
  private readonly agents: [HttpAgent, HttpsAgent];

  private constructor(
    private readonly sdk: S3Sdk,
    private readonly target: BucketTarget,
    guard: SsrfGuard,
    private readonly limits: BucketClientLimits,
  ) {
    const lookup = guardedLookup(guard);
    this.agents = [new HttpAgent({ lookup, keepAlive: true }), new HttpsAgent({ lookup, keepAlive: true })];
    this.client = new sdk.S3Client({
      region: target.region,
      endpoint: target.endpoint ?? undefined,
      forcePathStyle: target.forcePathStyle,
      credentials: { accessKeyId: target.accessKeyId, secretAccessKey: target.secretAccessKey },
      maxAttempts: limits.maxAttempts,
      requestHandler: {
        httpAgent: this.agents[0],
        httpsAgent: this.agents[1],
        connectionTimeout: CONNECTION_TIMEOUT_MS,
        requestTimeout: limits.requestTimeoutMs,
      },
    });
  }

  /**
   * A client for `target`. The AWS SDK is loaded on the first call, so a process whose accounts have no
   * storage destination never loads it (docs/performance.md, "Boot").
   */
  static async open(target: BucketTarget, guard: SsrfGuard, limits: BucketClientLimits): Promise<BucketClient> {
    return new BucketClient(await import('@aws-sdk/client-s3'), target, guard, limits);
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
