import { Injectable } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { UserView } from '../accounts/users.service';
import { ApiKeysService } from '../auth/api-keys.service';
import { ApiError, ErrorCode, FieldError } from '../common/api-error';
import { WorkEndWaiter } from '../queue/work-ended';
import { ExtractedMetadata } from '../results/extracted';
import { CreateScreenshotDto } from '../screenshots/dto/create-screenshot.dto';
import { ScreenshotJobDto } from '../screenshots/dto/screenshot-job.dto';
import { ScreenshotsService } from '../screenshots/screenshots.service';
import { notFoundAsPage } from './dashboard-request';
import { FormResult, formProblems } from './dashboard.service';

/** How long the playground's POST, and each later look at a job still running, waits for the job to end, ms. */
export const PLAYGROUND_WAIT_MS = 20_000;

/** Most characters of an extracted text shown in the page (the whole file is a link away). */
export const PLAYGROUND_TEXT_MAX_CHARS = 100_000;

/** Most links listed in the page (the whole list is a link away). */
export const PLAYGROUND_LINKS_MAX = 500;

/** An extracted text as the page shows it: its start, and whether the page cut it (`cut`) or the capture did (`truncated`). */
export interface ShownText {
  /** At most {@link PLAYGROUND_TEXT_MAX_CHARS} characters. */
  text: string;
  /** True when the page shows less than the file holds. */
  cut: boolean;
  /** The result file (capability URL), its size in bytes and whether the capture cut it at its cap. */
  url: string;
  bytes: number;
  truncated: boolean;
}

/** One row of the metadata table: a name, its value and whether the value is a link (an absolute http(s) URL). */
export interface MetadataRow {
  name: string;
  value: string;
  link: boolean;
}

/** One extracted link as listed: `link` false when its URL is not http(s) (then shown as text, never as a link). */
export interface ShownLink {
  url: string;
  text: string;
  rel: string;
  link: boolean;
}

/** What the playground shows of a job: the job, and once it is `done` what it extracted. */
export interface PlaygroundResult {
  job: ScreenshotJobDto;
  /** True while the job is pending or processing. */
  busy: boolean;
  markdown: ShownText | null;
  text: ShownText | null;
  html: ShownText | null;
  links: { url: string; count: number; items: ShownLink[] } | null;
  metadata: MetadataRow[] | null;
}

/**
 * The dashboard's playground (docs/dashboard.md, "Playground"): one capture with the options of
 * `POST /v1/screenshot` that show what a capture gives (viewport, full page, format including `none`,
 * `extract`, `markdownMode`, delay), made with one of the account's active keys through
 * {@link ScreenshotsService.create}, so validation, SSRF guard, quota and events are the API's. The
 * page then waits for the job's end on the server ({@link WorkEndWaiter}) and shows the image beside
 * the extracted content, read from the result files. Every id outside the user's account is 404.
 */
@Injectable()
export class DashboardPlaygroundService {
  constructor(
    private readonly apiKeys: ApiKeysService,
    private readonly screenshots: ScreenshotsService,
    private readonly waiter: WorkEndWaiter,
  ) {}

  /**
   * Accepts the form's capture as `POST /v1/screenshot` with the chosen key would (one capture counted).
   * A person's mistake (no active key chosen, an invalid or conflicting option, a refused target, the
   * quota reached) is the form's message, with the API's status (400, 403, 429); nothing is counted then.
   */
  async submit(user: UserView, form: Record<string, unknown>): Promise<FormResult<ScreenshotJobDto>> {
    const caller = await this.apiKeys.callerFor(user.accountId, String(form.keyId ?? ''));
    if (!caller) return { ok: false, error: 'Choose one of your active API keys.' };
    const dto = plainToInstance(CreateScreenshotDto, playgroundRequest(form));
    const invalid = await formProblems(dto);
    if (invalid) return { ok: false, error: invalid };
    try {
      // A person waits for it on the page: interactive (docs/durability.md, "Fair share").
      return { ok: true, value: await this.screenshots.create(caller, dto, { queueClass: 'interactive' }) };
    } catch (err) {
      if (!(err instanceof ApiError) || err.status < 400 || err.status >= 500) throw err;
      const fields = err.code === ErrorCode.VALIDATION_FAILED ? (err.details as { fields?: FieldError[] } | undefined)?.fields : undefined;
      return {
        ok: false,
        error: fields?.length ? fields.map((f) => `${f.field}: ${f.message}`).join('; ') : err.message,
        status: err.status,
      };
    }
  }

  /**
   * One of the account's jobs as the playground shows it, after waiting up to `waitMs` (ms) for it to
   * end; still `busy` when it did not. Throws {@link DashboardError.notFound} for another account's job.
   */
  async result(user: UserView, id: string, waitMs = PLAYGROUND_WAIT_MS): Promise<PlaygroundResult> {
    const caller = { accountId: user.accountId };
    const read = () => notFoundAsPage(() => this.screenshots.get(caller, id));
    const job =
      (await this.waiter.waitForEnd(id, waitMs, async () => {
        const now = await read();
        return now.status === 'done' || now.status === 'failed' ? now : null;
      })) ?? (await read());
    const result: PlaygroundResult = {
      job,
      busy: job.status === 'pending' || job.status === 'processing',
      markdown: null,
      text: null,
      html: null,
      links: null,
      metadata: null,
    };
    const extracted = job.extracted;
    if (job.status !== 'done' || !extracted) return result;
    for (const kind of ['markdown', 'text', 'html'] as const) {
      const file = extracted[kind];
      const content = file ? await this.screenshots.openExtracted(caller, id, kind) : null;
      if (file && content !== null) result[kind] = { ...shownText(content), url: file.url, bytes: file.bytes, truncated: file.truncated };
    }
    if (extracted.links) {
      const content = await this.screenshots.openExtracted(caller, id, 'links');
      if (content !== null) result.links = { url: extracted.links.url, count: extracted.links.count, items: shownLinks(content) };
    }
    if (extracted.metadata) result.metadata = metadataRows(extracted.metadata);
    return result;
  }
}

/**
 * The capture request of the playground's form fields (strings as an HTML form sends them): `url`,
 * `width`, `height`, `delay` (integers, kept as given when not one so validation names them),
 * `fullPage` (a checkbox), `format`, `extract` (checkboxes, one value or several) and `markdownMode`
 * (sent only with `markdown` extracted). Empty fields are left out, so the API's defaults apply.
 */
export function playgroundRequest(form: Record<string, unknown>): Record<string, unknown> {
  const int = (v: unknown) => (v === undefined || v === '' ? undefined : /^-?\d+$/.test(String(v)) ? Number(v) : v);
  const extract = ([] as unknown[]).concat(form.extract ?? []).map(String);
  return {
    url: String(form.url ?? '').trim(),
    width: int(form.width),
    height: int(form.height),
    fullPage: form.fullPage === 'on' || form.fullPage === 'true',
    format: form.format || undefined,
    delay: int(form.delay),
    extract: extract.length ? extract : undefined,
    markdownMode: extract.includes('markdown') && form.markdownMode ? form.markdownMode : undefined,
  };
}

/** The start of a text the page shows: at most {@link PLAYGROUND_TEXT_MAX_CHARS} characters, never half a surrogate pair. */
export function shownText(content: string): { text: string; cut: boolean } {
  if (content.length <= PLAYGROUND_TEXT_MAX_CHARS) return { text: content, cut: false };
  const end = PLAYGROUND_TEXT_MAX_CHARS - (/[\uD800-\uDBFF]/.test(content.charAt(PLAYGROUND_TEXT_MAX_CHARS - 1)) ? 1 : 0);
  return { text: content.slice(0, end), cut: true };
}

/** The first {@link PLAYGROUND_LINKS_MAX} links of the `links` file (`[{ url, text, rel }]`); only http(s) URLs become links. */
export function shownLinks(content: string): ShownLink[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(content);
  } catch {
    return [];
  }
  if (!Array.isArray(parsed)) return [];
  return parsed.slice(0, PLAYGROUND_LINKS_MAX).map((entry: Record<string, unknown>) => {
    const url = String(entry?.url ?? '');
    return { url, text: String(entry?.text ?? ''), rel: String(entry?.rel ?? ''), link: isHttpUrl(url) };
  });
}

/** The metadata as table rows: the named fields in the contract's order, then `og:*` and `twitter:*`; absent values left out. */
export function metadataRows(metadata: ExtractedMetadata): MetadataRow[] {
  const rows: MetadataRow[] = [];
  const add = (name: string, value: unknown, url = false) => {
    if (value === null || value === undefined || value === '') return;
    const text = String(value);
    rows.push({ name, value: text, link: url && isHttpUrl(text) });
  };
  add('title', metadata.title);
  add('description', metadata.description);
  add('lang', metadata.lang);
  add('canonicalUrl', metadata.canonicalUrl, true);
  add('siteName', metadata.siteName);
  add('image', metadata.image, true);
  add('favicon', metadata.favicon, true);
  add('statusCode', metadata.statusCode);
  add('finalUrl', metadata.finalUrl, true);
  for (const [key, value] of Object.entries(metadata.openGraph ?? {})) add(`og:${key}`, value, /^(url|image|video|audio)$/.test(key));
  for (const [key, value] of Object.entries(metadata.twitter ?? {})) add(`twitter:${key}`, value, key === 'image');
  return rows;
}

function isHttpUrl(value: string): boolean {
  return /^https?:\/\//i.test(value);
}
