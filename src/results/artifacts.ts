import { EXTRACT_CAPS, extractedSummary, ExtractedSummary, StoredExtracted, storedExtractedFiles } from './extracted';
import type { StoredObject } from './storage-path';

/*
 * The artifacts table: every kind of result a screenshot job keeps, declared once (docs/ARCHITECTURE.md,
 * "results/": "the artifacts table"). Each entry says who produces it, where the job row keeps it, its
 * result files in the service's storage, how the job (GET /v1/screenshots/{id}) and `screenshot.completed`
 * show it, how it is delivered to a storage destination (CONTRACT.md, "Storage destinations"), whether a
 * cache hit copies it (CONTRACT.md, "Capture options": `cache`) and what the housekeeping sweep deletes
 * (`RESULT_TTL_DAYS`, CONTRACT.md "Screenshot jobs"). The lifecycle, the job's DTO, the delivery, the cache
 * and the sweep iterate this table: a new artifact is a new entry here, a column of the job row, and the
 * code that produces it. Imports nothing but results/.
 */

/** Where the job row keeps each artifact (columns of `screenshot_jobs`, names as in the entity). */
export interface ArtifactColumns {
  /** The image or PDF, a result file (null with `format: "none"`). */
  resultFile: string | null;
  /** The `thumbnail` option's image, a result file. */
  thumbnailFile: string | null;
  /** The `extract` option's result files and metadata. */
  extracted: StoredExtracted | null;
  /** Where the result went with `storage` or `upload`. */
  storage: StoredObject | null;
}
export type ArtifactColumn = keyof ArtifactColumns;

/** How an artifact's result files are written to a storage destination's bucket, beside the image. */
export interface ArtifactDelivery {
  /**
   * The extension its object key is expanded with (`{ext}` of the path template), for a result file
   * `file` of a job whose image has extension `imageExt`; null for the image itself (the template's own key).
   */
  ext: (file: string, imageExt: string) => string | null;
  /** Largest file read for upload, bytes. */
  maxBytes: number;
  /** Customer-safe reasons of a failed upload: the file expired, or it is above `maxBytes`. */
  gone: string;
  tooLarge: string;
}

/** One kind of result artifact. `V` is its value in the job row (column `C`). */
export interface ResultArtifact<
  C extends ArtifactColumn = ArtifactColumn,
  J extends string = string,
  E extends string | null = string | null,
  S = unknown,
> {
  /** What produces it (documentation): the code that fills the column. */
  producer: string;
  /** Its content type and extension (documentation; `/files/…` serves the type of the extension). */
  contentType: string;
  /** The job row's column keeping it. */
  column: C;
  /** Its result files in the service's storage (their names, the storage keys). */
  files: (value: ArtifactColumns[C]) => string[];
  /** The same value with each result file renamed by `rename` (a cache hit's copies). */
  renameFiles: (value: NonNullable<ArtifactColumns[C]>, rename: (file: string) => string) => ArtifactColumns[C];
  /** The job's field showing it (only once `done`, else null) and `screenshot.completed`'s (null: not on the event). */
  jobField: J;
  eventField: E;
  /** What those fields show: the value with result files as capability URLs (`publicUrl`). */
  show: (value: ArtifactColumns[C], publicUrl: (file: string) => string) => S;
  /** How `storage` delivers its files; null when it has none to deliver. */
  delivery: ArtifactDelivery | null;
  /** What the job keeps with `storage.keepCopy: false` (the service's copies are deleted). */
  withoutCopy: (value: ArtifactColumns[C]) => ArtifactColumns[C];
  /** Whether a cache hit copies it from the job it reuses (else the cached job has none). */
  cached: boolean;
  /**
   * Whether the housekeeping sweep deletes its result files `RESULT_TTL_DAYS` after the job completed
   * (false: it has none in the service's storage).
   */
  swept: boolean;
}

const fileOrNone = (file: string | null): string[] => (file ? [file] : []);
const urlOf = (file: string | null, publicUrl: (file: string) => string): string | null => (file ? publicUrl(file) : null);

/** Largest thumbnail read for upload, bytes: a 1,920 × 1,920 RGBA image uncompressed, with room. */
const THUMBNAIL_MAX_BYTES = 16 * 1024 * 1024;

/** Largest extracted file read for upload, bytes: above the largest cap (html's), with room for the links' JSON. */
const EXTRACTED_FILE_MAX_BYTES = 4 * EXTRACT_CAPS.html;

/** Type helper: checks an entry against {@link ResultArtifact} and keeps its literal field names. */
function artifact<C extends ArtifactColumn, J extends string, E extends string | null, S>(
  entry: ResultArtifact<C, J, E, S>,
): ResultArtifact<C, J, E, S> {
  return entry;
}

/**
 * The artifacts table, in the order the delivery writes them (the image first). Tomorrow's artifacts
 * (an animated capture's video and poster, a crawl's bundle) are entries here.
 */
export const RESULT_ARTIFACTS = {
  image: artifact({
    producer: 'the capture engine (capture/; an animation: capture/animated-capture.ts), stored by the capture processor',
    contentType: 'png, jpeg, webp, pdf, mp4, webm or gif: RESULT_CONTENT_TYPES of the job format',
    column: 'resultFile',
    files: fileOrNone,
    renameFiles: (file, rename) => rename(file),
    jobField: 'url',
    eventField: 'publicUrl',
    show: urlOf,
    delivery: {
      ext: () => null,
      maxBytes: Number.MAX_SAFE_INTEGER,
      gone: 'the image expired before it could be uploaded',
      tooLarge: 'the image is too large to upload',
    },
    withoutCopy: () => null,
    cached: true,
    swept: true,
  }),
  thumbnail: artifact({
    producer: "screenshots/thumbnail.ts (saveThumbnail), the `thumbnail` option, or an animation's first frame",
    contentType: "the image's format and extension; PNG for an animation",
    column: 'thumbnailFile',
    files: fileOrNone,
    renameFiles: (file, rename) => rename(file),
    jobField: 'thumbnailUrl',
    eventField: 'thumbnailUrl',
    show: urlOf,
    // Beside the image as `<key without .ext>.thumb.<ext>` (or `<key>.thumb.<ext>` without `{ext}`), in its own
    // format: the image's, or PNG for an animation's poster (CONTRACT.md, "Animated captures").
    delivery: {
      ext: (file) => `thumb.${file.slice(file.lastIndexOf('.') + 1)}`,
      maxBytes: THUMBNAIL_MAX_BYTES,
      gone: 'the thumbnail could not be read for upload',
      tooLarge: 'the thumbnail could not be read for upload',
    },
    withoutCopy: () => null,
    cached: true,
    swept: true,
  }),
  extracted: artifact({
    producer: 'extract/ (ExtractionService.store), the `extract` option',
    contentType: 'markdown (.md), html (.html), text (.txt), links (.json); metadata inline',
    column: 'extracted',
    files: storedExtractedFiles,
    renameFiles: (stored, rename) => {
      const copy: StoredExtracted = { ...stored };
      for (const kind of ['markdown', 'html', 'text', 'links'] as const) {
        const entry = stored[kind];
        if (entry) Object.assign(copy, { [kind]: { ...entry, file: rename(entry.file) } });
      }
      return copy;
    },
    jobField: 'extracted',
    eventField: 'extracted',
    show: (stored, publicUrl): ExtractedSummary | null => extractedSummary(stored, publicUrl),
    // Beside the image with their own extensions (CONTRACT.md, "Storage destinations").
    delivery: {
      ext: (file) => file.slice(file.lastIndexOf('.') + 1),
      maxBytes: EXTRACTED_FILE_MAX_BYTES,
      gone: 'an extracted file expired before it could be uploaded',
      tooLarge: 'an extracted file is too large to upload',
    },
    withoutCopy: (stored) => (stored?.metadata ? { metadata: stored.metadata } : null),
    cached: true,
    swept: true,
  }),
  storage: artifact({
    producer: 'storage-destinations/ (StorageDeliveryService.deliver), the `storage` and `upload` options',
    contentType: "the objects in the customer's bucket (the image, then the files above beside it)",
    column: 'storage',
    files: () => [],
    renameFiles: (stored) => stored,
    jobField: 'storage',
    eventField: null,
    show: (stored) => stored,
    delivery: null,
    withoutCopy: (stored) => stored,
    cached: false,
    // The customer's bucket keeps its objects; nothing of it is in the service's storage.
    swept: false,
  }),
} as const;

export type ArtifactKind = keyof typeof RESULT_ARTIFACTS;
export const ARTIFACT_KINDS = Object.keys(RESULT_ARTIFACTS) as ArtifactKind[];
type Table = typeof RESULT_ARTIFACTS;
type Shown<K extends ArtifactKind> = ReturnType<Table[K]['show']>;

/** The job's fields of the artifacts (`url`, `thumbnailUrl`, `extracted`, `storage`). */
export type ArtifactJobFields = { [K in ArtifactKind as Table[K]['jobField']]: Shown<K> };
/** `screenshot.completed`'s fields of the artifacts (`publicUrl`, `thumbnailUrl`, `extracted`). */
export type ArtifactEventFields = { [K in ArtifactKind as NonNullable<Table[K]['eventField']> & string]: Shown<K> };

/** Every artifact with a loose type, for the loops below. */
const entries = (): [ArtifactKind, ResultArtifact][] =>
  ARTIFACT_KINDS.map((kind) => [kind, RESULT_ARTIFACTS[kind] as unknown as ResultArtifact]);

/** A job row's artifact columns, each null when absent from `values`. */
export function artifactColumns(values: Partial<ArtifactColumns>): ArtifactColumns {
  const columns = {} as Record<ArtifactColumn, unknown>;
  for (const [, a] of entries()) columns[a.column] = values[a.column] ?? null;
  return columns as unknown as ArtifactColumns;
}

/** Every result file in the service's storage of a job row's artifacts (what the sweep and a failed delivery delete). */
export function artifactFiles(row: Partial<ArtifactColumns>): string[] {
  return entries().flatMap(([, a]) => a.files((row[a.column] ?? null) as never));
}

/** The columns holding result files the housekeeping sweep deletes (what it reads and selects on). */
export const SWEPT_COLUMNS: ArtifactColumn[] = entries()
  .filter(([, a]) => a.swept)
  .map(([, a]) => a.column);

/** The job's artifact fields of a row (null for each unless `done`; `publicUrl` turns a result file into its capability URL). */
export function artifactJobFields(row: ArtifactColumns, done: boolean, publicUrl: (file: string) => string): ArtifactJobFields {
  const fields: Record<string, unknown> = {};
  for (const [, a] of entries()) fields[a.jobField] = done ? a.show(row[a.column] as never, publicUrl) : null;
  return fields as ArtifactJobFields;
}

/** `screenshot.completed`'s artifact fields of a row. */
export function artifactEventFields(row: ArtifactColumns, publicUrl: (file: string) => string): ArtifactEventFields {
  const fields: Record<string, unknown> = {};
  for (const [, a] of entries()) if (a.eventField) fields[a.eventField] = a.show(row[a.column] as never, publicUrl);
  return fields as ArtifactEventFields;
}

/** What the job keeps with `storage.keepCopy: false`. */
export function artifactsWithoutCopy(row: ArtifactColumns): ArtifactColumns {
  const kept = {} as Record<ArtifactColumn, unknown>;
  for (const [, a] of entries()) kept[a.column] = a.withoutCopy(row[a.column] as never);
  return kept as unknown as ArtifactColumns;
}

/**
 * The artifacts a cache hit keeps from `source` (CONTRACT.md, "Capture options": `cache`), each result
 * file copied under a fresh name by `copy` (null when the file is gone); null when any copy failed (the
 * job is then captured instead; copies already made are left to expire). Artifacts not `cached` are null.
 */
export async function copyArtifacts(
  source: ArtifactColumns,
  copy: (file: string) => Promise<string | null>,
): Promise<ArtifactColumns | null> {
  const renamed = new Map<string, string>();
  for (const [, a] of entries()) {
    if (!a.cached) continue;
    for (const file of a.files(source[a.column] as never)) {
      const fresh = await copy(file);
      if (!fresh) return null;
      renamed.set(file, fresh);
    }
  }
  const copied = {} as Record<ArtifactColumn, unknown>;
  for (const [, a] of entries()) {
    const value = source[a.column];
    copied[a.column] = a.cached && value !== null ? a.renameFiles(value as never, (file) => renamed.get(file) as string) : null;
  }
  return copied as unknown as ArtifactColumns;
}

/** One result file to write to a storage destination, beside the image. */
export interface DeliveredArtifactFile {
  file: string;
  /** The `{ext}` its key is expanded with. */
  ext: string;
  delivery: ArtifactDelivery;
}

/**
 * The result files a `storage` delivery writes beside the image, in table order (the image itself is
 * written from memory by the delivery; its own entry has no `ext`).
 */
export function filesBesideImage(row: Partial<ArtifactColumns>, imageExt: string): DeliveredArtifactFile[] {
  const out: DeliveredArtifactFile[] = [];
  for (const [, a] of entries()) {
    if (!a.delivery) continue;
    for (const file of a.files((row[a.column] ?? null) as never)) {
      const ext = a.delivery.ext(file, imageExt);
      if (ext !== null) out.push({ file, ext, delivery: a.delivery });
    }
  }
  return out;
}
