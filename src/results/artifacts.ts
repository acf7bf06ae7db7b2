import { getSchemaPath, type ApiPropertyOptions } from '@nestjs/swagger';
import { EXTRACT_CAPS, extractedSummary, ExtractedSummary, StoredExtracted, storedExtractedFiles } from './extracted';
import { ExtractedDto } from './extracted.dto';
import type { StoredObject } from './storage-path';
import { StoredObjectDto } from './stored-object.dto';

/*
 * The artifacts table: every kind of result a screenshot job keeps, declared once (docs/ARCHITECTURE.md,
 * "results/": "the artifacts table"). Each entry says who produces it, its value in the job row (the
 * JSONB column `artifacts`, keyed by the entry's name), its result files in the service's storage, how the
 * job (GET /v1/screenshots/{id}) and `screenshot.completed` show it and their OpenAPI schemas and examples,
 * how it is delivered to a storage destination (CONTRACT.md, "Storage destinations") and whether a cache
 * hit copies it (CONTRACT.md, "Capture options": `cache`); the housekeeping sweep deletes its result files
 * `RESULT_TTL_DAYS` after the job completed (CONTRACT.md, "Screenshot jobs"). The lifecycle, the job's and
 * the event's DTOs (results/artifact-fields.dto.ts), the OpenAPI examples, the delivery, the cache and the
 * sweep iterate this table: a new artifact is a new entry here and the code that produces it.
 * Imports nothing of src/ but results/.
 */

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

/**
 * The OpenAPI side of an artifact: the schema of its job field and of its `screenshot.completed` field
 * (`@ApiProperty` options; null: not on the event), the models those schemas refer to, and the value a
 * done job's and the event's examples show.
 */
export interface ArtifactOpenApi<S> {
  job: ApiPropertyOptions;
  event: ApiPropertyOptions | null;
  models: (abstract new () => unknown)[];
  example: S;
}

/** One kind of result artifact. `V` is its value in the job row (absent: the job has none). */
export interface ResultArtifact<V = unknown, J extends string = string, E extends string | null = string | null, S = unknown> {
  /** What produces it (documentation): the code that fills its value. */
  producer: string;
  /** Its content type and extension (documentation; `/files/…` serves the type of the extension). */
  contentType: string;
  /** Its result files in the service's storage (their names, the storage keys). */
  files: (value: V) => string[];
  /** The same value with each result file renamed by `rename` (a cache hit's copies). */
  renameFiles: (value: V, rename: (file: string) => string) => V;
  /** The job's field showing it (only once `done`, else null) and `screenshot.completed`'s (null: not on the event). */
  jobField: J;
  eventField: E;
  /** What those fields show: the value with result files as capability URLs (`publicUrl`); null when the job has none. */
  show: (value: V | null, publicUrl: (file: string) => string) => S;
  /** The OpenAPI schemas of those fields and their example. */
  openapi: ArtifactOpenApi<S>;
  /** How `storage` delivers its files; null when it has none to deliver. */
  delivery: ArtifactDelivery | null;
  /** What the job keeps with `storage.keepCopy: false` (the service's copies are deleted); null: nothing. */
  withoutCopy: (value: V) => V | null;
  /** Whether a cache hit copies it from the job it reuses (else the cached job has none). */
  cached: boolean;
}

const fileOrNone = (file: string | null): string[] => (file ? [file] : []);
const urlOf = (file: string | null, publicUrl: (file: string) => string): string | null => (file ? publicUrl(file) : null);

/** Largest thumbnail read for upload, bytes: a 1,920 × 1,920 RGBA image uncompressed, with room. */
const THUMBNAIL_MAX_BYTES = 16 * 1024 * 1024;

/** Largest extracted file read for upload, bytes: above the largest cap (html's), with room for the links' JSON. */
const EXTRACTED_FILE_MAX_BYTES = 4 * EXTRACT_CAPS.html;

/** The OpenAPI schema of a field showing an object of `model`, or null (the model an extra model of the DTO). */
const nullableModel = (model: abstract new () => unknown, description: string): ApiPropertyOptions => ({
  // As TypeScript's design type of `Model | null`: the schema is the `oneOf` alone, no `allOf` of the model.
  type: Object,
  oneOf: [{ $ref: getSchemaPath(model) }, { type: 'null' }],
  description,
});

/** Type helper: checks an entry against {@link ResultArtifact} for its row value `V` and keeps its literal field names. */
function artifact<V>() {
  return <J extends string, E extends string | null, S>(entry: ResultArtifact<V, J, E, S>): ResultArtifact<V, J, E, S> => entry;
}

/**
 * The artifacts table, in the order the delivery writes them (the image first). Tomorrow's artifacts
 * (an animated capture's video and poster, a crawl's bundle) are entries here.
 */
export const RESULT_ARTIFACTS = {
  image: artifact<string>()({
    producer: 'the capture engine (capture/), stored by the capture processor',
    contentType: 'png, jpeg, webp or pdf: RESULT_CONTENT_TYPES of the job format',
    files: fileOrNone,
    renameFiles: (file, rename) => rename(file),
    jobField: 'url',
    eventField: 'publicUrl',
    show: urlOf,
    openapi: {
      job: {
        type: 'string',
        nullable: true,
        description: 'Result URL (a capability URL, no API key needed); null until status is done',
        example: 'http://localhost:3000/files/2vQd…x1.png',
      },
      event: {
        type: 'string',
        nullable: true,
        description: 'Result URL (capability URL, no API key needed); null with format none',
        example: 'https://glimpse.example.com/files/2vQd…x1.png',
      },
      models: [],
      example: 'https://glimpse.example.com/files/Xq2vQd8Lr0tYb3nWc5mKz7hJf1pSg4aDe6uVi9oRl2x.png',
    },
    delivery: {
      ext: () => null,
      maxBytes: Number.MAX_SAFE_INTEGER,
      gone: 'the image expired before it could be uploaded',
      tooLarge: 'the image is too large to upload',
    },
    withoutCopy: () => null,
    cached: true,
  }),
  thumbnail: artifact<string>()({
    producer: 'screenshots/thumbnail.ts (saveThumbnail), the `thumbnail` option',
    contentType: "the image's format and extension",
    files: fileOrNone,
    renameFiles: (file, rename) => rename(file),
    jobField: 'thumbnailUrl',
    eventField: 'thumbnailUrl',
    show: urlOf,
    openapi: {
      job: {
        type: 'string',
        nullable: true,
        description:
          'Thumbnail URL (capture option thumbnail; a capability URL served as the result); null until done, and without thumbnail',
        example: 'http://localhost:3000/files/7hJf…r0.png',
      },
      event: {
        type: 'string',
        nullable: true,
        description: 'Thumbnail URL (capability URL, no API key needed, served as the result); null without the thumbnail option',
        example: 'https://glimpse.example.com/files/7hJf1pSg…r0.png',
      },
      models: [],
      example: null,
    },
    // Beside the image as `<key without .ext>.thumb.<ext>` (or `<key>.thumb.<ext>` without `{ext}`).
    delivery: {
      ext: (_file, imageExt) => `thumb.${imageExt}`,
      maxBytes: THUMBNAIL_MAX_BYTES,
      gone: 'the thumbnail could not be read for upload',
      tooLarge: 'the thumbnail could not be read for upload',
    },
    withoutCopy: () => null,
    cached: true,
  }),
  extracted: artifact<StoredExtracted>()({
    producer: 'extract/ (ExtractionService.store), the `extract` option',
    contentType: 'markdown (.md), html (.html), text (.txt), links (.json); metadata inline',
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
    openapi: {
      job: nullableModel(
        ExtractedDto,
        'The extracted content (docs/CONTRACT.md, "Extracted content"): result files of what extract asked for, metadata inline; null until done, and without extract',
      ),
      event: nullableModel(ExtractedDto, "The job's extracted object (URLs, sizes, metadata; not the contents); null without extract"),
      models: [ExtractedDto],
      example: null,
    },
    // Beside the image with their own extensions (CONTRACT.md, "Storage destinations").
    delivery: {
      ext: (file) => file.slice(file.lastIndexOf('.') + 1),
      maxBytes: EXTRACTED_FILE_MAX_BYTES,
      gone: 'an extracted file expired before it could be uploaded',
      tooLarge: 'an extracted file is too large to upload',
    },
    withoutCopy: (stored) => (stored.metadata ? { metadata: stored.metadata } : null),
    cached: true,
  }),
  storage: artifact<StoredObject>()({
    producer: 'storage-destinations/ (StorageDeliveryService.deliver), the `storage` and `upload` options',
    contentType: "the objects in the customer's bucket (the image, then the files above beside it)",
    // The customer's bucket keeps its objects; nothing of it is in the service's storage (nor swept).
    files: () => [],
    renameFiles: (stored) => stored,
    jobField: 'storage',
    eventField: null,
    show: (stored) => stored,
    openapi: {
      job: nullableModel(
        StoredObjectDto,
        'Where the result was delivered with the storage or upload option (docs/storage-destinations.md); null until done, and without them',
      ),
      event: null,
      models: [StoredObjectDto],
      example: null,
    },
    delivery: null,
    withoutCopy: (stored) => stored,
    cached: false,
  }),
} as const;

export type ArtifactKind = keyof typeof RESULT_ARTIFACTS;
export const ARTIFACT_KINDS = Object.keys(RESULT_ARTIFACTS) as ArtifactKind[];
type Table = typeof RESULT_ARTIFACTS;
type Shown<K extends ArtifactKind> = ReturnType<Table[K]['show']>;
type ValueOf<K extends ArtifactKind> = Parameters<Table[K]['files']>[0];

/**
 * A job row's `artifacts` (JSONB): each artifact the job has, by kind, with its value (file names,
 * metadata); an artifact the job does not have is absent. `{}` until done, and for a failed job.
 */
export type StoredArtifacts = { [K in ArtifactKind]?: ValueOf<K> };

/** The job's fields of the artifacts (`url`, `thumbnailUrl`, `extracted`, `storage`). */
export type ArtifactJobFields = { [K in ArtifactKind as Table[K]['jobField']]: Shown<K> };
/** `screenshot.completed`'s fields of the artifacts (`publicUrl`, `thumbnailUrl`, `extracted`). */
export type ArtifactEventFields = { [K in ArtifactKind as NonNullable<Table[K]['eventField']> & string]: Shown<K> };

/** Every artifact with a loose type, for the loops below. */
export const artifactEntries = (): [ArtifactKind, ResultArtifact][] =>
  ARTIFACT_KINDS.map((kind) => [kind, RESULT_ARTIFACTS[kind] as unknown as ResultArtifact]);

/** The value of artifact `kind` in `stored`, or null when the job has none. */
const valueOf = (stored: StoredArtifacts, kind: ArtifactKind): unknown => stored[kind] ?? null;

/** `values` without the artifacts that are null or absent: what the job row's `artifacts` keeps. */
export function storedArtifacts(values: { [K in ArtifactKind]?: ValueOf<K> | null }): StoredArtifacts {
  const kept: Record<string, unknown> = {};
  for (const kind of ARTIFACT_KINDS) if (values[kind] !== null && values[kind] !== undefined) kept[kind] = values[kind];
  return kept as StoredArtifacts;
}

/** Every result file in the service's storage of a job's artifacts (what the sweep and a failed delivery delete). */
export function artifactFiles(stored: StoredArtifacts): string[] {
  return artifactEntries().flatMap(([kind, a]) => (stored[kind] ? a.files(stored[kind]) : []));
}

/** The job's artifact fields (null for each unless `done`; `publicUrl` turns a result file into its capability URL). */
export function artifactJobFields(stored: StoredArtifacts, done: boolean, publicUrl: (file: string) => string): ArtifactJobFields {
  const fields: Record<string, unknown> = {};
  for (const [kind, a] of artifactEntries()) fields[a.jobField] = done ? a.show(valueOf(stored, kind), publicUrl) : null;
  return fields as ArtifactJobFields;
}

/** `screenshot.completed`'s artifact fields. */
export function artifactEventFields(stored: StoredArtifacts, publicUrl: (file: string) => string): ArtifactEventFields {
  const fields: Record<string, unknown> = {};
  for (const [kind, a] of artifactEntries()) if (a.eventField) fields[a.eventField] = a.show(valueOf(stored, kind), publicUrl);
  return fields as ArtifactEventFields;
}

/** The artifact fields of a done job's and of `screenshot.completed`'s OpenAPI examples (each entry's `openapi.example`). */
export function artifactExamples(): { job: ArtifactJobFields; event: ArtifactEventFields } {
  const job: Record<string, unknown> = {};
  const event: Record<string, unknown> = {};
  for (const [, a] of artifactEntries()) {
    job[a.jobField] = a.openapi.example;
    if (a.eventField) event[a.eventField] = a.openapi.example;
  }
  return { job: job as ArtifactJobFields, event: event as ArtifactEventFields };
}

/** What the job keeps with `storage.keepCopy: false`. */
export function artifactsWithoutCopy(stored: StoredArtifacts): StoredArtifacts {
  const kept: Record<string, unknown> = {};
  for (const [kind, a] of artifactEntries()) if (stored[kind]) kept[kind] = a.withoutCopy(stored[kind]);
  return storedArtifacts(kept);
}

/**
 * The artifacts a cache hit keeps from `source` (CONTRACT.md, "Capture options": `cache`), each result
 * file copied under a fresh name by `copy` (null when the file is gone); null when any copy failed (the
 * job is then captured instead; copies already made are left to expire). Artifacts not `cached` are left out.
 */
export async function copyArtifacts(
  source: StoredArtifacts,
  copy: (file: string) => Promise<string | null>,
): Promise<StoredArtifacts | null> {
  const copied: Record<string, unknown> = {};
  for (const [kind, a] of artifactEntries()) {
    const value = source[kind];
    if (!a.cached || !value) continue;
    const renamed = new Map<string, string>();
    for (const file of a.files(value)) {
      const fresh = await copy(file);
      if (!fresh) return null;
      renamed.set(file, fresh);
    }
    copied[kind] = a.renameFiles(value, (file) => renamed.get(file) as string);
  }
  return copied as StoredArtifacts;
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
export function filesBesideImage(stored: StoredArtifacts, imageExt: string): DeliveredArtifactFile[] {
  const out: DeliveredArtifactFile[] = [];
  for (const [kind, a] of artifactEntries()) {
    const value = stored[kind];
    if (!a.delivery || !value) continue;
    for (const file of a.files(value)) {
      const ext = a.delivery.ext(file, imageExt);
      if (ext !== null) out.push({ file, ext, delivery: a.delivery });
    }
  }
  return out;
}
