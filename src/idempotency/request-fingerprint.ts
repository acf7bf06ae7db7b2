import type { Request } from 'express';
import { canonicalJson } from '../common/canonical-json';
import { sha256Hex } from '../common/hashing';

/** An uploaded file as multer (memory storage) attaches it to the request. */
interface UploadedFile {
  fieldname: string;
  buffer?: Buffer;
}

/** `req.file` and `req.files` (array or per-field map), in upload order. */
function uploadedFiles(req: Request): UploadedFile[] {
  const r = req as Request & { file?: UploadedFile; files?: UploadedFile[] | Record<string, UploadedFile[]> };
  const files = Array.isArray(r.files) ? r.files : Object.values(r.files ?? {}).flat();
  return [...(r.file ? [r.file] : []), ...files];
}

/**
 * The default request fingerprint of `@Idempotent()` routes: SHA-256 of the canonical JSON of the
 * parsed body (JSON, or multipart form fields) and of each uploaded file's field name and SHA-256.
 * Uploads must be parsed into memory before it runs: put the upload interceptor *below*
 * `@Idempotent()` on the route, so it runs first.
 */
export function requestFingerprint(req: Request): string {
  if (req.is('multipart/form-data') && req.body === undefined) {
    throw new Error('Multipart body not parsed before the idempotency interceptor: put the upload interceptor below @Idempotent()');
  }
  const files = uploadedFiles(req).map((file) => {
    if (!file.buffer) throw new Error('Uploaded file has no buffer: use multer memory storage or pass @Idempotent({ fingerprint })');
    return { field: file.fieldname, sha256: sha256Hex(file.buffer) };
  });
  return sha256Hex(canonicalJson({ body: req.body ?? null, files }));
}
