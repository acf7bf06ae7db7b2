import { Inject, Injectable } from '@nestjs/common';
import type { Readable } from 'node:stream';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { Clock } from '../common/clock';
import {
  ByteRange,
  newResultFileName,
  RESULT_FILE_CONTENT_TYPES,
  RESULT_FILE_NAME,
  ResultFileExtension,
  ResultStorage,
} from './result-storage';

const DAY_MS = 24 * 60 * 60 * 1000;

/** A result file read whole when it fits a bound (small images returned inline by MCP). */
export interface ServedFile {
  /** The bytes; null when the file is larger than the bound it was opened with (then never read). */
  data: Buffer | null;
  contentType: string;
  /** Bytes. */
  size: number;
}

/** A result file that may be served: what the response headers need (CONTRACT.md, "Result files"). */
export interface ResultFileInfo {
  name: string;
  contentType: string;
  /** Bytes. */
  size: number;
  /** Quoted strong entity tag. */
  etag: string;
  storedAt: Date;
  /** When the file stops being served (`storedAt` + `RESULT_TTL_DAYS`). */
  expiresAt: Date;
}

/**
 * Result files and their capability URLs `{PUBLIC_BASE_URL}/files/<token>.<ext>` (CONTRACT.md,
 * "Screenshot jobs" and "Result files"): served without an API key for `RESULT_TTL_DAYS` after they
 * were stored, then 404; the housekeeping sweep deletes them by job row ({@link deleteFile}).
 */
@Injectable()
export class ResultFilesService {
  constructor(
    private readonly storage: ResultStorage,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Stores a result (an image, a PDF, or a run's WebM video) under a fresh unguessable name with extension `ext`; returns that name. */
  async save(data: Buffer, ext: ResultFileExtension): Promise<string> {
    const name = newResultFileName(ext);
    await this.storage.put(name, data, RESULT_FILE_CONTENT_TYPES[ext]);
    return name;
  }

  /**
   * Stores the local file at `path` (a run's WebM video, written by ffmpeg) as a result under a fresh
   * unguessable name with extension `ext`, never reading it whole ({@link ResultStorage.putFile}: a
   * kernel copy on local disk, a multipart upload to S3), so the worker's memory stays flat whatever
   * the file's size (docs/runs.md#cost). Returns that name; rejects when the file cannot be read or
   * stored (nothing is stored then). The caller still owns, and removes, the file at `path`.
   */
  async saveFile(path: string, ext: ResultFileExtension): Promise<string> {
    const name = newResultFileName(ext);
    await this.storage.putFile(name, path, RESULT_FILE_CONTENT_TYPES[ext]);
    return name;
  }

  /**
   * Stores the bytes of `body` (a crawl's bundle, written as it is read) as a result under a fresh
   * unguessable name with extension `ext` ({@link ResultStorage.putStream}: memory stays bounded
   * whatever its length). Returns that name; rejects when `body` errors or the write fails (nothing is
   * stored then).
   */
  async saveStream(body: Readable, ext: ResultFileExtension): Promise<string> {
    const name = newResultFileName(ext);
    await this.storage.putStream(name, body, RESULT_FILE_CONTENT_TYPES[ext]);
    return name;
  }

  /** The public URL of a stored file name. */
  publicUrl(name: string): string {
    return `${this.config.publicBaseUrl}/files/${name}`;
  }

  /** Files stored (jobs completed) before the returned time have expired at `now`. */
  expiredBefore(now: Date): Date {
    return new Date(now.getTime() - this.config.resultTtlDays * DAY_MS);
  }

  /** When a file stored at `storedAt` expires. */
  expiryOf(storedAt: Date): Date {
    return new Date(storedAt.getTime() + this.config.resultTtlDays * DAY_MS);
  }

  /** The servable file of a request path name, or null (malformed, unknown, or expired). */
  async describe(name: string): Promise<ResultFileInfo | null> {
    if (!RESULT_FILE_NAME.test(name)) return null;
    const info = await this.storage.stat(name);
    if (!info) return null;
    const expiresAt = this.expiryOf(info.storedAt);
    if (expiresAt.getTime() <= this.clock.now().getTime()) return null;
    const ext = name.slice(name.lastIndexOf('.') + 1) as ResultFileExtension;
    return { name, contentType: RESULT_FILE_CONTENT_TYPES[ext], size: info.size, etag: info.etag, storedAt: info.storedAt, expiresAt };
  }

  /** The bytes of a file described by {@link describe} (or of `range`) as a stream. */
  stream(file: ResultFileInfo, range?: ByteRange): Promise<Readable> {
    return this.storage.createReadStream(file.name, range);
  }

  /**
   * A servable file read whole when it has at most `maxBytes` bytes (else `data` is null and nothing
   * is read), or null (unknown or expired); for small images (MCP inline results), never for `/files`.
   * Memory stays bounded by `maxBytes` whatever the file's size.
   */
  async open(name: string, maxBytes: number): Promise<ServedFile | null> {
    const file = await this.describe(name);
    if (!file) return null;
    const served = { contentType: file.contentType, size: file.size };
    if (file.size > maxBytes) return { ...served, data: null };
    const chunks: Buffer[] = [];
    let read = 0;
    for await (const chunk of await this.stream(file)) {
      read += (chunk as Buffer).length;
      if (read > maxBytes) return { ...served, data: null };
      chunks.push(chunk as Buffer);
    }
    return { ...served, data: Buffer.concat(chunks) };
  }

  /**
   * Stores a copy of a result file under a fresh unguessable name (a cache hit's own result URL,
   * CONTRACT.md "Capture options": cache); returns that name, or null when the file is gone or expired.
   */
  async copy(name: string): Promise<string | null> {
    const file = await this.describe(name);
    if (!file) return null;
    const copy = newResultFileName(name.slice(name.lastIndexOf('.') + 1));
    try {
      await this.storage.copy(name, copy);
    } catch (err) {
      // Deleted between describe and copy (the sweep): as if it had expired.
      if ((await this.storage.stat(name)) === null) return null;
      throw err;
    }
    return copy;
  }

  /** Deletes a stored file (no error when already gone); the sweep calls it for expired jobs. */
  deleteFile(name: string): Promise<void> {
    return this.storage.delete(name);
  }
}
