/*
 * The object key of an uploaded result (CONTRACT.md, "Storage destinations"): the `storage.path`
 * template, its placeholders and how they expand. Pure rules, imported by the options table
 * (validation) and the upload (expansion); imports nothing.
 */

/** Most characters of a `storage.path` template. */
export const STORAGE_PATH_MAX_LENGTH = 512;

/** The template used when `storage.path` is not given. */
export const DEFAULT_STORAGE_PATH = '{id}.{ext}';

/** Placeholders of a path template, in the order the docs list them. */
export const STORAGE_PATH_PLACEHOLDERS = ['id', 'ext', 'date', 'host', 'accountId'] as const;
export type StoragePathPlaceholder = (typeof STORAGE_PATH_PLACEHOLDERS)[number];

/** What the placeholders expand to for one result. */
export interface StoragePathValues {
  /** The job id (`scr_…`). */
  id: string;
  /** The file's extension without the dot (`png`, `md`, …). */
  ext: string;
  /** When the job was created. `{date}` is its UTC day, `YYYY-MM-DD`. */
  createdAt: Date;
  /** The captured URL, or `upload:<sha256>` for an uploaded document (then `{host}` is `upload`). */
  targetUrl: string;
  /** The account id (`acc_…`). */
  accountId: string;
}

/** Where a job's result was stored (the job's `storage`, CONTRACT.md "Storage destinations"). */
export interface StoredObject {
  /** The destination (`dst_…`); null for an `upload` (presigned URL). */
  destinationId: string | null;
  /** Null for an `upload`. */
  bucket: string | null;
  /** The image's object key, prefix included; null for an `upload`. */
  key: string | null;
  /** The ETag the bucket or receiver answered (quoted as sent), or null when it sent none. */
  etag: string | null;
}

const PLACEHOLDER = /\{([^{}]*)\}/g;

/**
 * Why `template` is not a usable path template, or null when it is: at most
 * {@link STORAGE_PATH_MAX_LENGTH} characters, only the known placeholders, no braces outside them,
 * no control characters, and not starting with `/`.
 */
export function storagePathProblem(template: string): string | null {
  if (template.length === 0) return 'must not be empty';
  if (template.length > STORAGE_PATH_MAX_LENGTH) return `must be at most ${STORAGE_PATH_MAX_LENGTH} characters`;
  if (/[\x00-\x1f\x7f]/.test(template)) return 'must not contain control characters';
  if (template.startsWith('/')) return 'must not start with /';
  for (const [, name] of template.matchAll(PLACEHOLDER)) {
    if (!(STORAGE_PATH_PLACEHOLDERS as readonly string[]).includes(name)) {
      return `has an unknown placeholder {${name}}; known: ${STORAGE_PATH_PLACEHOLDERS.map((p) => `{${p}}`).join(', ')}`;
    }
  }
  if (/[{}]/.test(template.replace(PLACEHOLDER, ''))) return 'has an unmatched { or }';
  return null;
}

/**
 * The object key of one file: `prefix` then `template` with its placeholders expanded. `{host}` is
 * the URL's host name (without port), `upload` for an uploaded document. Call
 * {@link storagePathProblem} on the template first (an unknown placeholder is left as it is).
 */
export function storageObjectKey(prefix: string, template: string, values: StoragePathValues): string {
  const expansions: Record<StoragePathPlaceholder, string> = {
    id: values.id,
    ext: values.ext,
    date: values.createdAt.toISOString().slice(0, 10),
    host: hostOf(values.targetUrl),
    accountId: values.accountId,
  };
  return prefix + template.replace(PLACEHOLDER, (whole, name: string) => expansions[name as StoragePathPlaceholder] ?? whole);
}

/**
 * The key of a file stored beside the image (an extracted file, CONTRACT.md "Storage destinations":
 * "beside it with their own extensions"): the template expanded with the file's extension; when the
 * template has no `{ext}` (so the keys would be the same), the image's key plus `.<ext>`.
 */
export function besideObjectKey(prefix: string, template: string, values: StoragePathValues, imageExt: string): string {
  const image = storageObjectKey(prefix, template, { ...values, ext: imageExt });
  const beside = storageObjectKey(prefix, template, values);
  return beside === image ? `${image}.${values.ext}` : beside;
}

function hostOf(targetUrl: string): string {
  if (targetUrl.startsWith('upload:')) return 'upload';
  try {
    return new URL(targetUrl).hostname;
  } catch {
    return 'unknown';
  }
}
