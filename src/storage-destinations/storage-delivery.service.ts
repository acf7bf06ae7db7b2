import { Injectable, Logger } from '@nestjs/common';
import { artifactFiles, artifactsWithoutCopy, filesBesideImage, StoredArtifacts } from '../results/artifacts';
import { RESULT_CONTENT_TYPES, ResultFormat } from '../results/result-formats';
import { CustomerMessage } from '../results/customer-messages';
import { SsrfGuard } from '../egress/ssrf-guard';
import { ResultFilesService } from '../storage/result-files.service';
import { BucketClient, BucketTarget } from './bucket-client';
import { describeDestinationError } from './destination-errors';
import { presignedPut, PresignedUploadError } from './presigned-upload';
import { StorageDestinationsService } from './storage-destinations.service';
import { besideObjectKey, DEFAULT_STORAGE_PATH, storageObjectKey, StoredObject, StoragePathValues } from '../results/storage-path';

/** The resolved `storage` option (CONTRACT.md, "Storage destinations"). */
export interface StorageOption {
  destinationId: string;
  /** Path template; default {@link DEFAULT_STORAGE_PATH}. */
  path: string;
  /** Whether the service keeps its own copy (default true). */
  keepCopy: boolean;
}

/** The resolved `upload` option: a presigned `PUT` URL and the headers to send with it. */
export interface UploadOption {
  url: string;
  headers: Record<string, string>;
}

/** The job a result belongs to, as far as its object key cares. */
export interface DeliveredJob {
  id: string;
  accountId: string;
  /** The captured URL, or `upload:<sha256>`. */
  targetUrl: string;
  createdAt: Date;
}

/**
 * A capture's stored result, before it is delivered: the image or PDF bytes (null with `format: "none"`)
 * and the artifacts in the service's storage (src/results/artifacts.ts; `storage` is what delivery adds).
 */
export interface CapturedFiles {
  image: Buffer | null;
  format: ResultFormat | null;
  artifacts: Omit<StoredArtifacts, 'storage'>;
}

/**
 * How hard a delivery to a bucket tries: 3 attempts per object with the SDK's back-off, 20 s per
 * attempt, and at most 60 s for all the job's objects together (the stuck-job sweep allows minutes).
 */
const DELIVERY_LIMITS = { maxAttempts: 3, requestTimeoutMs: 20_000, totalMs: 60_000 } as const;

/** Prefix of the job's `error` when delivery failed (CONTRACT.md, "Storage destinations"). */
export const STORAGE_FAILURE_PREFIX = 'storage upload failed: ';

/**
 * Delivers a finished capture to the customer's storage (CONTRACT.md, "Storage destinations"): with
 * `storage`, the image and the result files of the other artifacts (the artifacts table,
 * src/results/artifacts.ts: thumbnail, extracted files) are written to the destination's bucket under the
 * path template; with `upload`, the image is sent with one `PUT` to the presigned URL. Both go through
 * the SSRF guard and are retried with back-off. The capture processor calls {@link deliver} after
 * storing the result and ends the job `done` only with what it returns.
 */
@Injectable()
export class StorageDeliveryService {
  private readonly logger = new Logger(StorageDeliveryService.name);

  constructor(
    private readonly destinations: StorageDestinationsService,
    private readonly files: ResultFilesService,
    private readonly guard: SsrfGuard,
  ) {}

  /**
   * Delivers `captured` as `options` ask (nothing to do without `storage` and `upload`). Returns what
   * the job keeps: its artifacts and `storage`, where the result went (none without `storage` and `upload`); with `keepCopy: false`, the service's copies are deleted (the job's `url` is null,
   * only the inline metadata of `extracted` stays). Throws a {@link CustomerMessage} `storage upload
   * failed: <reason>` (customer-safe) when any file could not be delivered; the service's copies are
   * then deleted, as the job fails.
   */
  async deliver(
    job: DeliveredJob,
    options: { storage?: StorageOption | null; upload?: UploadOption | null },
    captured: CapturedFiles,
  ): Promise<StoredArtifacts> {
    const kept = captured.artifacts;
    if (!options.storage && !options.upload) return kept;
    let storage: StoredObject;
    try {
      storage = options.storage
        ? await this.toBucket(job, options.storage, captured)
        : await this.toPresignedUrl(options.upload as UploadOption, captured);
    } catch (err) {
      await this.dropCopies(captured);
      if (err instanceof DeliveryFailure) throw new CustomerMessage(STORAGE_FAILURE_PREFIX + err.message);
      this.logger.error(`Delivery of ${job.id} failed`, err instanceof Error ? err.stack : String(err));
      throw new CustomerMessage(`${STORAGE_FAILURE_PREFIX}the upload could not be completed`);
    }
    if (options.storage && !options.storage.keepCopy) {
      await this.dropCopies(captured);
      return artifactsWithoutCopy({ ...kept, storage });
    }
    return { ...kept, storage };
  }

  /** Writes the image, then each other artifact's result files beside it (in table order), to the destination's bucket. */
  private async toBucket(job: DeliveredJob, option: StorageOption, captured: CapturedFiles): Promise<StoredObject> {
    const destination = await this.destinations.findFor(job.accountId, option.destinationId);
    if (!destination) throw new DeliveryFailure('the storage destination no longer exists');
    let target: BucketTarget;
    try {
      target = this.destinations.targetOf(destination);
    } catch {
      throw new DeliveryFailure("the storage destination's credentials could not be read; add the destination again");
    }
    const client = await BucketClient.open(target, this.guard, {
      ...DELIVERY_LIMITS,
      signal: AbortSignal.timeout(DELIVERY_LIMITS.totalMs),
    });
    const values = (ext: string): StoragePathValues => ({
      id: job.id,
      accountId: job.accountId,
      targetUrl: job.targetUrl,
      createdAt: job.createdAt,
      ext,
    });
    const template = option.path || DEFAULT_STORAGE_PATH;
    const imageExt = captured.format ?? 'bin';
    const key = storageObjectKey(destination.prefix, template, values(imageExt));
    try {
      let etag: string | null = null;
      if (captured.image && captured.format) etag = await client.put(key, captured.image, RESULT_CONTENT_TYPES[captured.format]);
      for (const { file, ext, delivery } of filesBesideImage(captured.artifacts, imageExt)) {
        const opened = await this.files.open(file, delivery.maxBytes);
        if (!opened) throw new DeliveryFailure(delivery.gone);
        if (!opened.data) throw new DeliveryFailure(delivery.tooLarge);
        await client.put(besideObjectKey(destination.prefix, template, values(ext), imageExt), opened.data, opened.contentType);
      }
      return { destinationId: destination.id, bucket: destination.bucket, key, etag };
    } catch (err) {
      if (err instanceof DeliveryFailure) throw err;
      throw new DeliveryFailure(describeDestinationError(err));
    } finally {
      client.close();
    }
  }

  /** Sends the image with one `PUT` to the presigned URL. */
  private async toPresignedUrl(option: UploadOption, captured: CapturedFiles): Promise<StoredObject> {
    if (!captured.image || !captured.format) throw new DeliveryFailure('there is no image to upload');
    try {
      const etag = await presignedPut(this.guard, option.url, captured.image, RESULT_CONTENT_TYPES[captured.format], option.headers);
      return { destinationId: null, bucket: null, key: null, etag };
    } catch (err) {
      if (err instanceof PresignedUploadError) throw new DeliveryFailure(err.message);
      throw err;
    }
  }

  /** Deletes the service's copies of a result (best effort: the housekeeping sweep never sees them). */
  private async dropCopies(captured: CapturedFiles): Promise<void> {
    const names = artifactFiles(captured.artifacts);
    await Promise.all(
      names.map((name) =>
        this.files.deleteFile(name).catch((err: unknown) => this.logger.warn(`Could not delete ${name}: ${(err as Error).message}`)),
      ),
    );
  }
}

/** A delivery failure whose message is customer-safe. */
class DeliveryFailure extends Error {}
