import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  NotFound,
  NoSuchKey,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { Readable } from 'node:stream';
import { APP_CONFIG, AppConfig, S3Config } from '../config/app-config';
import { ByteRange, RESULT_FILE_NAME, ResultStorage, StoredFileInfo } from './result-storage';

/**
 * Part size of a streamed upload, bytes: S3's smallest part (5 MiB); a body no larger is sent with one
 * `PutObject`. At most {@link STREAM_PARTS_IN_FLIGHT} parts are held in memory at once.
 */
const STREAM_PART_BYTES = 5 * 1024 * 1024;
const STREAM_PARTS_IN_FLIGHT = 2;

/**
 * {@link ResultStorage} in an S3-compatible bucket (`STORAGE_DRIVER=s3`: AWS S3, MinIO, Ceph, R2…)
 * with `@aws-sdk/client-s3`. Objects are keyed by the file name; reads are streamed from the bucket
 * (ranged `GetObject`), never buffered whole, and {@link putStream} writes with a multipart upload
 * (`@aws-sdk/lib-storage`), holding at most {@link STREAM_PART_BYTES} × {@link STREAM_PARTS_IN_FLIGHT}. The bucket must exist; no lifecycle rule is needed:
 * the housekeeping sweep deletes expired results by job row.
 */
@Injectable()
export class S3Storage extends ResultStorage implements OnModuleDestroy {
  private readonly client: S3Client;
  private readonly bucket: string;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    super();
    const s3 = config.s3 as S3Config;
    this.bucket = s3.bucket;
    this.client = new S3Client({
      region: s3.region,
      endpoint: s3.endpoint,
      forcePathStyle: s3.forcePathStyle,
      credentials: s3.accessKeyId && s3.secretAccessKey ? { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } : undefined,
    });
  }

  async put(name: string, data: Buffer, contentType: string): Promise<void> {
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: this.keyOf(name),
        Body: data,
        ContentType: contentType,
        ContentLength: data.length,
      }),
    );
  }

  async putStream(name: string, body: Readable, contentType: string): Promise<void> {
    // A failed multipart upload is aborted (leavePartsOnError false): no object, no parts left billed.
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: this.keyOf(name), Body: body, ContentType: contentType },
      partSize: STREAM_PART_BYTES,
      queueSize: STREAM_PARTS_IN_FLIGHT,
      leavePartsOnError: false,
    });
    await upload.done();
  }

  async copy(from: string, to: string): Promise<void> {
    // Server-side: the bytes never pass through this process.
    await this.client.send(
      new CopyObjectCommand({ Bucket: this.bucket, Key: this.keyOf(to), CopySource: `${this.bucket}/${this.keyOf(from)}` }),
    );
  }

  async stat(name: string): Promise<StoredFileInfo | null> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.keyOf(name) }));
      return { size: head.ContentLength ?? 0, storedAt: head.LastModified ?? new Date(0), etag: head.ETag ?? `"${name}"` };
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }

  async createReadStream(name: string, range?: ByteRange): Promise<Readable> {
    const object = await this.client.send(
      new GetObjectCommand({ Bucket: this.bucket, Key: this.keyOf(name), Range: range ? `bytes=${range.start}-${range.end}` : undefined }),
    );
    if (!(object.Body instanceof Readable)) throw new Error('S3 GetObject returned no stream');
    return object.Body;
  }

  async delete(name: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.keyOf(name) }));
  }

  onModuleDestroy(): void {
    this.client.destroy();
  }

  private keyOf(name: string): string {
    if (!RESULT_FILE_NAME.test(name)) throw new Error(`Invalid result file name ${name}`);
    return name;
  }
}

function isMissing(err: unknown): boolean {
  return err instanceof NotFound || err instanceof NoSuchKey || (err instanceof S3ServiceException && err.$metadata.httpStatusCode === 404);
}
