import { randomBytes } from 'node:crypto';

/** A stored result file. */
export interface StoredFile {
  data: Buffer;
  /** When the file was written. */
  storedAt: Date;
}

/** Pattern of a result file name: a 256-bit base64url token and an image extension. */
export const RESULT_FILE_NAME = /^[A-Za-z0-9_-]{43}\.(png|jpeg|webp|pdf)$/;

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
