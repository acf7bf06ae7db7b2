import { RESULT_CONTENT_TYPES, RESULT_FORMATS } from '../capture/image-format';
import { randomBytes } from 'node:crypto';

/** A stored result file. */
export interface StoredFile {
  data: Buffer;
  /** When the file was written. */
  storedAt: Date;
}

/** Extensions of result files: what a screenshot job produces, and browser session run videos. */
export const RESULT_FILE_EXTENSIONS = [...RESULT_FORMATS, 'webm'] as const;
export type ResultFileExtension = (typeof RESULT_FILE_EXTENSIONS)[number];

/** MIME type per result file extension (the `Content-Type` of `/files/…`). */
export const RESULT_FILE_CONTENT_TYPES: Record<ResultFileExtension, string> = { ...RESULT_CONTENT_TYPES, webm: 'video/webm' };

/** Pattern of a result file name: a 256-bit base64url token and a result file extension. */
export const RESULT_FILE_NAME = new RegExp(`^[A-Za-z0-9_-]{43}\\.(${RESULT_FILE_EXTENSIONS.join('|')})$`);

/** A fresh, unguessable result file name (`<256-bit base64url token>.<ext>`): a capability. */
export function newResultFileName(ext: string): string {
  return `${randomBytes(32).toString('base64url')}.${ext}`;
}

/**
 * Where result files live. Local disk now; an S3-compatible store can implement the same interface.
 * Names are always {@link RESULT_FILE_NAME}s.
 */
export abstract class ResultStorage {
  /** Stores `data` under `name`, replacing any file of that name. */
  abstract put(name: string, data: Buffer): Promise<void>;
  /** The file, or null when there is none. */
  abstract get(name: string): Promise<StoredFile | null>;
  /** Deletes the file; no error when it is already gone. */
  abstract delete(name: string): Promise<void>;
  /** Deletes every file stored before `cutoff`; returns how many. */
  abstract deleteOlderThan(cutoff: Date): Promise<number>;
}
