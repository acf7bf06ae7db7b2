import { RESULT_CONTENT_TYPES, RESULT_FORMATS } from '../results/result-formats';
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';

/** What storage knows of a stored result file. */
export interface StoredFileInfo {
  /** Bytes. */
  size: number;
  /** When the file was written. */
  storedAt: Date;
  /** Strong entity tag, quoted (`"…"`), as sent in `ETag`. */
  etag: string;
}

/** Inclusive byte range, as in `Range: bytes=start-end`. */
export interface ByteRange {
  start: number;
  end: number;
}

/** Extensions of the extracted content's files and their MIME types (CONTRACT.md, "Extracted content"). */
export const EXTRACTED_FILE_CONTENT_TYPES = {
  md: 'text/markdown; charset=utf-8',
  html: 'text/html; charset=utf-8',
  txt: 'text/plain; charset=utf-8',
  json: 'application/json',
} as const;

/**
 * Extensions of result files: what a screenshot job produces (image, PDF or animation, extracted
 * content), browser session run videos (`webm`, an animation format too) and crawl bundles (`zip`).
 */
export const RESULT_FILE_EXTENSIONS = [...RESULT_FORMATS, 'md', 'html', 'txt', 'json', 'zip'] as const;
export type ResultFileExtension = (typeof RESULT_FILE_EXTENSIONS)[number];

/** MIME type per result file extension (the `Content-Type` of `/files/…`). */
export const RESULT_FILE_CONTENT_TYPES: Record<ResultFileExtension, string> = {
  ...RESULT_CONTENT_TYPES,
  zip: 'application/zip',
  ...EXTRACTED_FILE_CONTENT_TYPES,
};

/** Pattern of a result file name: a 256-bit base64url token and a result file extension. */
export const RESULT_FILE_NAME = new RegExp(`^[A-Za-z0-9_-]{43}\\.(${RESULT_FILE_EXTENSIONS.join('|')})$`);

/** A fresh, unguessable result file name (`<256-bit base64url token>.<ext>`): a capability. */
export function newResultFileName(ext: string): string {
  return `${randomBytes(32).toString('base64url')}.${ext}`;
}

/**
 * Where result files live: a local directory (`STORAGE_DRIVER=local`) or an S3-compatible bucket
 * (`s3`). Names are always {@link RESULT_FILE_NAME}s; files never change once written. Which files
 * have expired is known from the job rows, never by listing the store.
 */
export abstract class ResultStorage {
  /** Stores `data` under `name`, replacing any file of that name. */
  abstract put(name: string, data: Buffer, contentType: string): Promise<void>;
  /**
   * Stores the bytes of `body` under `name`, replacing any file of that name, reading the stream as
   * it is written so memory stays bounded whatever its length (a run's video). No partial file is
   * ever visible under `name`; rejects (and leaves nothing behind) when `body` errors or the write fails.
   */
  abstract putStream(name: string, body: Readable, contentType: string): Promise<void>;
  /**
   * Stores a copy of the local file at `path` under `name`, as {@link putStream} does (by default
   * through it, a driver may copy more cheaply); the file at `path` is left in place. Rejects when
   * the file cannot be read (ENOENT…) or the write fails; nothing is stored under `name` then.
   */
  putFile(name: string, path: string, contentType: string): Promise<void> {
    return this.putStream(name, createReadStream(path), contentType);
  }
  /** Size, storage time and entity tag of the file, or null when there is none. */
  abstract stat(name: string): Promise<StoredFileInfo | null>;
  /** The file's bytes (or those of `range`) as a stream; rejects when the file is gone. */
  abstract createReadStream(name: string, range?: ByteRange): Promise<Readable>;
  /** Stores a copy of file `from` under `to` (the copy's storage time is now); rejects when `from` is gone. */
  abstract copy(from: string, to: string): Promise<void>;
  /** Deletes the file; no error when it is already gone. */
  abstract delete(name: string): Promise<void>;
}
