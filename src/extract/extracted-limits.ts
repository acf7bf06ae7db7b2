import {
  EXTRACT_CAPS,
  EXTRACT_LINK_TEXT_MAX_CHARS,
  EXTRACT_LINKS_MAX,
  EXTRACT_METADATA_CAPS,
  ExtractedMetadata,
  ExtractKind,
} from '../results/extracted';

/** A text extracted from the page, cut at its cap. */
export interface ExtractedText {
  content: string;
  /** True when the page's content was longer than the cap (CONTRACT.md, "Extracted content"). */
  truncated: boolean;
}

/** A link of the page: absolute URL, its text (whitespace collapsed) and `rel` (null when absent). */
export interface ExtractedLink {
  url: string;
  text: string;
  rel: string | null;
}

/** The page's content as kept: only the kinds asked for, every limit applied. */
export interface PageContent {
  markdown?: ExtractedText;
  html?: ExtractedText;
  text?: ExtractedText;
  links?: ExtractedLink[];
  metadata?: Omit<ExtractedMetadata, 'statusCode' | 'finalUrl'>;
}

/**
 * The limits on what a page returns, applied by the service after reading (CONTRACT.md, "Tenancy: fair
 * share and isolation" and "Extracted content"; docs/extract.md, "Limits"), never trusted to code running
 * in the page, which the page can change: `raw` is whatever the page's evaluation answered, of any shape.
 *
 * - `markdown`, `text` (5 MiB) and `html` (10 MiB): cut at the cap in bytes of UTF-8, at a character
 *   boundary ({@link cutUtf8}); `truncated` when cut here or when the page said so. Not a string: empty.
 * - `links`: entries with a string `url`, `javascript:` ones left out, de-duplicated by URL (first kept),
 *   at most 5,000; `text` and `rel` cut at 1,000 characters.
 * - `metadata`: every string cut at 2,048 characters, a lone surrogate replaced by U+FFFD (PostgreSQL's
 *   `jsonb` refuses one), `openGraph` + `twitter` at most 200 entries together (`openGraph`'s first);
 *   values of another type are null (fields) or left out (entries).
 *
 * Only the kinds in `kinds` are kept. Time linear in the size of `raw`. Never throws.
 */
export function limitPageContent(raw: unknown, kinds: readonly ExtractKind[]): PageContent {
  const page = isRecord(raw) ? raw : {};
  const out: PageContent = {};
  for (const kind of ['markdown', 'html', 'text'] as const) {
    if (!kinds.includes(kind)) continue;
    const value = page[kind];
    const given = isRecord(value) ? value : {};
    const cut = cutUtf8(typeof given.content === 'string' ? given.content : '', EXTRACT_CAPS[kind]);
    out[kind] = { content: cut.content, truncated: cut.truncated || given.truncated === true };
  }
  if (kinds.includes('links')) out.links = limitLinks(page.links);
  if (kinds.includes('metadata')) out.metadata = limitMetadata(page.metadata);
  return out;
}

/**
 * `text` cut at `capBytes` bytes of UTF-8 at a character boundary (`TextEncoder.encodeInto` into a buffer
 * of the cap; a lone surrogate counts 3 bytes, as it is stored as U+FFFD): `truncated` when it was longer.
 */
export function cutUtf8(text: string, capBytes: number): ExtractedText {
  if (text.length * 3 <= capBytes) return { content: text, truncated: false };
  const { read } = new TextEncoder().encodeInto(text, new Uint8Array(capBytes));
  return read < text.length ? { content: text.slice(0, read), truncated: true } : { content: text, truncated: false };
}

/** `text` cut at `maxChars` UTF-16 code units, never between the two halves of a surrogate pair. */
export function cutChars(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const high = text.charCodeAt(maxChars - 1);
  return text.slice(0, high >= 0xd800 && high <= 0xdbff ? maxChars - 1 : maxChars);
}

function limitLinks(raw: unknown): ExtractedLink[] {
  const links: ExtractedLink[] = [];
  if (!Array.isArray(raw)) return links;
  const seen = new Set<string>();
  for (const entry of raw) {
    if (links.length >= EXTRACT_LINKS_MAX) break;
    if (!isRecord(entry) || typeof entry.url !== 'string' || !entry.url) continue;
    const url = entry.url;
    if (url.slice(0, 11).toLowerCase() === 'javascript:' || seen.has(url)) continue;
    seen.add(url);
    links.push({
      url,
      text: typeof entry.text === 'string' ? cutChars(entry.text, EXTRACT_LINK_TEXT_MAX_CHARS) : '',
      rel: typeof entry.rel === 'string' && entry.rel ? cutChars(entry.rel, EXTRACT_LINK_TEXT_MAX_CHARS) : null,
    });
  }
  return links;
}

const METADATA_FIELDS = ['title', 'description', 'lang', 'canonicalUrl', 'siteName', 'image', 'favicon'] as const;

function limitMetadata(raw: unknown): Omit<ExtractedMetadata, 'statusCode' | 'finalUrl'> {
  const given = isRecord(raw) ? raw : {};
  const { valueMaxChars, entriesMax } = EXTRACT_METADATA_CAPS;
  const kept = (text: string) => wellFormed(cutChars(text, valueMaxChars));
  const field = (value: unknown) => (typeof value === 'string' && value ? kept(value) : null);
  let room: number = entriesMax;
  const properties = (value: unknown): Record<string, string> => {
    // A Map, then Object.fromEntries: a key `__proto__` stays an own property, never the prototype.
    const entries = new Map<string, string>();
    if (isRecord(value)) {
      for (const key in value) {
        if (room === 0) break;
        const entry = value[key];
        if (!Object.hasOwn(value, key) || typeof entry !== 'string') continue;
        const name = kept(key);
        if (entries.has(name)) continue;
        entries.set(name, kept(entry));
        room--;
      }
    }
    return Object.fromEntries(entries);
  };
  const fields = Object.fromEntries(METADATA_FIELDS.map((name) => [name, field(given[name])])) as Record<
    (typeof METADATA_FIELDS)[number],
    string | null
  >;
  const openGraph = properties(given.openGraph);
  const twitter = properties(given.twitter);
  return { ...fields, openGraph, twitter };
}

/** `text` with each lone surrogate replaced by U+FFFD (ES2024 `String.prototype.toWellFormed`, Node ≥ 20). */
function wellFormed(text: string): string {
  return (text as string & { toWellFormed(): string }).toWellFormed();
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
