/*
 * The vocabulary of extracted content (docs/CONTRACT.md, "Extracted content"): what `extract` can ask
 * for, the caps, and the job's `extracted` object, shared by the options table (capture/), the result
 * files (storage/), the events and the feature that extracts (extract/). Imports nothing.
 */

/** What `extract` can ask for (CONTRACT.md, "Extracted content"). */
export const EXTRACT_KINDS = ['markdown', 'html', 'text', 'links', 'metadata'] as const;
export type ExtractKind = (typeof EXTRACT_KINDS)[number];

/** `markdownMode`: the main content as Mozilla Readability finds it, or the whole body. */
export const MARKDOWN_MODES = ['readable', 'full'] as const;
export type MarkdownMode = (typeof MARKDOWN_MODES)[number];

const MIB = 1024 * 1024;

/** Caps of the extracted files, bytes of UTF-8 (CONTRACT.md, "Extracted content"); longer ones are cut and say `truncated`. */
export const EXTRACT_CAPS = { html: 10 * MIB, markdown: 5 * MIB, text: 5 * MIB } as const;

/** Most links kept (CONTRACT.md, "Extracted content"). */
export const EXTRACT_LINKS_MAX = 5_000;

/** Longest link `text` and `rel` kept, characters (docs/extract.md). */
export const EXTRACT_LINK_TEXT_MAX_CHARS = 1_000;

/**
 * Caps of `metadata` (CONTRACT.md, "Tenancy: fair share and isolation"): each string (a field's value,
 * an `openGraph`/`twitter` key or value) at most `valueMaxChars` characters (UTF-16 code units, never
 * splitting a surrogate pair); `openGraph` and `twitter` together at most `entriesMax` entries,
 * `openGraph`'s first, in the page's order.
 */
export const EXTRACT_METADATA_CAPS = { valueMaxChars: 2_048, entriesMax: 200 } as const;

/** A text file extracted from the page, as the job shows it. */
export interface ExtractedFile {
  /** Capability URL of the result file. */
  url: string;
  /** Size of the stored file, bytes. */
  bytes: number;
  /** True when the content was cut at its cap. */
  truncated: boolean;
}

/** The page's metadata (absent values null; URLs absolute). */
export interface ExtractedMetadata {
  title: string | null;
  description: string | null;
  lang: string | null;
  canonicalUrl: string | null;
  siteName: string | null;
  image: string | null;
  favicon: string | null;
  /** The page's `og:*` properties, prefix dropped (`og:title` → `title`). */
  openGraph: Record<string, string>;
  /** The page's `twitter:*` properties, prefix dropped. */
  twitter: Record<string, string>;
  /** HTTP status of the main document (null when unknown). */
  statusCode: number | null;
  /** URL of the page after redirects. */
  finalUrl: string | null;
}

/** The job's `extracted` object (CONTRACT.md, "Extracted content"): what was asked for, the contents as result files. */
export interface ExtractedSummary {
  markdown?: ExtractedFile;
  html?: ExtractedFile;
  text?: ExtractedFile;
  links?: { url: string; count: number };
  metadata?: ExtractedMetadata;
}

/** What the job row keeps of an extracted file: the result file's name instead of its URL. */
export interface StoredExtractedFile {
  /** Result file name in storage. */
  file: string;
  bytes: number;
  truncated: boolean;
}

/** The job row's `extracted` artifact (`artifacts.extracted`): {@link ExtractedSummary} with file names (URLs depend on `PUBLIC_BASE_URL`). */
export interface StoredExtracted {
  markdown?: StoredExtractedFile;
  html?: StoredExtractedFile;
  text?: StoredExtractedFile;
  links?: { file: string; count: number };
  metadata?: ExtractedMetadata;
}

/** The result file names of a job's extracted content (the housekeeping sweep deletes them with the image). */
export function storedExtractedFiles(stored: StoredExtracted | null | undefined): string[] {
  if (!stored) return [];
  return [stored.markdown?.file, stored.html?.file, stored.text?.file, stored.links?.file].filter((f): f is string => !!f);
}

/** The job's `extracted` object of a stored one, each file name turned into its capability URL by `publicUrl`. */
export function extractedSummary(stored: StoredExtracted | null | undefined, publicUrl: (file: string) => string): ExtractedSummary | null {
  if (!stored) return null;
  const summary: ExtractedSummary = {};
  for (const kind of ['markdown', 'html', 'text'] as const) {
    const file = stored[kind];
    if (file) summary[kind] = { url: publicUrl(file.file), bytes: file.bytes, truncated: file.truncated };
  }
  if (stored.links) summary.links = { url: publicUrl(stored.links.file), count: stored.links.count };
  if (stored.metadata) summary.metadata = stored.metadata;
  return summary;
}
