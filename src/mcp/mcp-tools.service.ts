import { Injectable, Logger } from '@nestjs/common';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { WorkEndWaiter } from '../queue/work-ended';
import type { AuthenticatedKey } from '../auth/api-keys.service';
import { ApiError, ErrorCode } from '../common/api-error';
import { CAPTURE_LIMITS, CAPTURE_OPTION_NAMES, SESSION_OPTION_NAMES } from '../capture/capture-options';
import { isAnimationFormat } from '../results/result-formats';
import { ScreenshotJobDto } from '../screenshots/dto/screenshot-job.dto';
import { ScreenshotsService } from '../screenshots/screenshots.service';
import { QuotaService } from '../quota/quota.service';
import { RunDto } from '../runs/dto/run.dto';
import { RunsService } from '../runs/runs.service';
import { MonitorsService } from '../monitors/monitors.service';
import { CrawlDto } from '../crawls/dto/crawl.dto';
import { CrawlsService } from '../crawls/crawls.service';
import {
  CRAWL_SITE_INPUT_SCHEMA,
  CRAWL_WAIT_S,
  CrawlSiteInput,
  CREATE_MONITOR_INPUT_SCHEMA,
  CreateMonitorInput,
  LIST_MONITOR_CHANGES_INPUT_SCHEMA,
  ListMonitorChangesInput,
  GET_QUOTA_INPUT_SCHEMA,
  GET_RUN_INPUT_SCHEMA,
  GetRunInput,
  RUN_BROWSER_SESSION_INPUT_SCHEMA,
  RUN_WAIT_S,
  RunBrowserSessionInput,
  GET_SCREENSHOT_INPUT_SCHEMA,
  GetScreenshotInput,
  SCREENSHOT_WAIT_S,
  splitWait,
  TAKE_SCREENSHOT_INPUT_SCHEMA,
  TakeScreenshotInput,
  validateToolInput,
} from './tool-inputs';
import {
  QUOTA_OUTPUT_SCHEMA,
  QuotaOutput,
  READ_PAGE_OUTPUT_SCHEMA,
  ReadPageOutput,
  SCREENSHOT_OUTPUT_SCHEMA,
  ScreenshotOutput,
} from './tool-outputs';

/**
 * Largest image returned inline as MCP image content, in bytes (10 MiB, about 13.3 MiB of base64):
 * beyond that MCP clients and models refuse or truncate the result, so the tool links the image
 * (`url`) and says so instead.
 */
export const INLINE_IMAGE_MAX_BYTES = 10 * 1024 * 1024;

/** Most characters of markdown `read_page` returns inline (CONTRACT.md, "Extracted content"); more is cut and marked. */
export const READ_PAGE_MARKDOWN_MAX_CHARS = 100_000;

/** Name and version the server reports in `initialize`. */
/** The hints of a tool that starts work on the open web (a capture, a monitor, a crawl): it adds, never deletes, and each call adds anew. */
const STARTS_WORK: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true };

/** The hints of a tool that only reads what the account already has (a job, a run, the quota, changes). */
const READS_ACCOUNT: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };

const SERVER_INFO = { name: 'glimpse', title: 'Glimpse screenshots', version: '1.0.0' };

const INSTRUCTIONS =
  'Glimpse captures screenshots of web pages with a real Chromium browser. Call take_screenshot with a URL to get the ' +
  'image; call run_browser_session to log in, click through a flow and take screenshots along the way (with a video and the ' +
  "page's errors); every accepted capture or run counts against the monthly quota of the API key in this server URL (see get_quota). " +
  'Failed calls return isError with a stable code such as VALIDATION_FAILED, TARGET_NOT_ALLOWED, PLAN_QUOTA_EXCEEDED or NOT_FOUND.';

/**
 * The MCP tools (`take_screenshot`, `read_page`, `get_screenshot`, `get_quota`, `run_browser_session`, `get_run`,
 * `create_monitor`, `list_monitor_changes`, `crawl_site`) for one authenticated API key.
 * They go through the same services as the REST API, so captures get the same validation, SSRF
 * guard, quota count and events as `POST /v1/screenshot`. Every failure is a tool result with
 * `isError: true` whose first text is `<CODE>: <message>` (CONTRACT.md's codes).
 */
@Injectable()
export class McpToolsService {
  private readonly logger = new Logger('McpTools');

  constructor(
    private readonly screenshots: ScreenshotsService,
    private readonly quota: QuotaService,
    private readonly runs: RunsService,
    private readonly monitors: MonitorsService,
    private readonly waiter: WorkEndWaiter,
    private readonly crawls: CrawlsService,
  ) {}

  /**
   * A fresh MCP server whose tools act for `caller`. A connected server cannot be reused, so the
   * endpoint builds one per HTTP request (stateless Streamable HTTP). The SDK's server is loaded on
   * the first call, so a process that never serves MCP never loads it (docs/performance.md, "Boot").
   */
  async createServer(caller: AuthenticatedKey): Promise<McpServer> {
    const { McpServer } = await import('@modelcontextprotocol/sdk/server/mcp.js');
    const server = new McpServer(SERVER_INFO, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
    const L = CAPTURE_LIMITS;
    server.registerTool(
      'take_screenshot',
      {
        title: 'Take a screenshot',
        description:
          'Captures a screenshot of a web page (http or https URL reachable from the public internet) and returns the image, ' +
          'its public URL and the job as JSON {id, status, url, format, width, height}. ' +
          `Viewport: width ${L.width.min}-${L.width.max} px (default ${L.width.default}), height ${L.height.min}-${L.height.max} px ` +
          `(default ${L.height.default}); fullPage captures the whole scrollable page; format png (default), jpeg or webp; ` +
          `delay waits ${L.delayMs.min}-${L.delayMs.max} ms after the page load (default ${L.delayMs.default}). ` +
          `Every capture option is an argument, described in the input schema: ${CAPTURE_OPTION_NAMES.join(', ')}. ` +
          `Waits up to wait seconds (${SCREENSHOT_WAIT_S.min}-${SCREENSHOT_WAIT_S.max}, default ${SCREENSHOT_WAIT_S.default}; timeoutSeconds is its older name) for the capture; ` +
          'if it is not finished by then, returns the id with status pending or processing: call get_screenshot with that id later. ' +
          'Each accepted capture counts one screenshot against the monthly quota of this API key, also when the capture ' +
          'later fails; a call refused for its arguments, its target or a reached quota counts nothing.',
        inputSchema: TAKE_SCREENSHOT_INPUT_SCHEMA,
        outputSchema: SCREENSHOT_OUTPUT_SCHEMA,
        annotations: STARTS_WORK,
      },
      (args, extra) => this.asToolResult(() => this.takeScreenshot(caller, args, extra.signal)),
    );
    server.registerTool(
      'read_page',
      {
        title: 'Read a web page',
        description:
          'Loads a web page (http or https URL reachable from the public internet) in a real browser and returns its content as markdown ' +
          `(the main content as Mozilla Readability finds it, its title as the first heading; markdownMode full: the whole body; at most ${READ_PAGE_MARKDOWN_MAX_CHARS.toLocaleString('en-US')} characters, then …[truncated]) ` +
          'and the page metadata as structured content {title, description, lang, canonicalUrl, siteName, image, favicon, openGraph, twitter, statusCode, finalUrl}. ' +
          'Takes the same arguments as take_screenshot (waits, scripts, cookies, headers, …); no image unless format is given. ' +
          `Waits up to wait seconds (${SCREENSHOT_WAIT_S.min}-${SCREENSHOT_WAIT_S.max}, default ${SCREENSHOT_WAIT_S.default}); ` +
          'if the page is not read by then, the structured content is {id, status}: call get_screenshot with that id later (its job has the extracted files). ' +
          'Counts one screenshot against the monthly quota of this API key.',
        inputSchema: TAKE_SCREENSHOT_INPUT_SCHEMA,
        outputSchema: READ_PAGE_OUTPUT_SCHEMA,
        annotations: STARTS_WORK,
      },
      (args, extra) => this.asToolResult(() => this.readPage(caller, args, extra.signal)),
    );
    server.registerTool(
      'get_screenshot',
      {
        title: 'Get a screenshot job',
        description:
          'Returns a screenshot job of this account by id as JSON {id, status, url, format, width, height}; status is ' +
          'pending, processing, done or failed. With includeImage true (default false) and status done, also returns the image (an animation: its url only). ' +
          'Use it for a take_screenshot call that returned before the capture finished. Does not count against the quota.',
        inputSchema: GET_SCREENSHOT_INPUT_SCHEMA,
        outputSchema: SCREENSHOT_OUTPUT_SCHEMA,
        annotations: READS_ACCOUNT,
      },
      (args) => this.asToolResult(() => this.getScreenshot(caller, args)),
    );
    server.registerTool(
      'get_quota',
      {
        title: 'Get the screenshot quota',
        description:
          'Returns the monthly screenshot quota of this API key as JSON {plan, limit, used, remaining, resetAt}: screenshots ' +
          'allowed per calendar month (UTC), used so far, remaining, and when the count resets (ISO 8601, 1st of next month ' +
          '00:00 UTC). Does not count against the quota.',
        inputSchema: GET_QUOTA_INPUT_SCHEMA,
        outputSchema: QUOTA_OUTPUT_SCHEMA,
        annotations: READS_ACCOUNT,
      },
      () => this.asToolResult(() => this.getQuota(caller)),
    );
    server.registerTool(
      'run_browser_session',
      {
        title: 'Run a browser session',
        description:
          'Opens a fresh browser session on url, performs the steps in order (fill, click, waitForUrl, screenshot, …), records a WebM video and ' +
          'collects the console and network errors of the page; returns the run object as JSON (status completed or failed, finalUrl, pageTitle, ' +
          'videoUrl, consoleErrors, networkErrors, steps with their status, error, screenshotUrl and result, finalizationError) and the step ' +
          'screenshots as images. A failed step fails the run (later steps skipped) unless it has optional: true. Same arguments as POST /v1/runs ' +
          `(the session options ${SESSION_OPTION_NAMES.join(', ')} as in take_screenshot), ` +
          `plus timeoutSeconds (${RUN_WAIT_S.min}-${RUN_WAIT_S.max}, default ${RUN_WAIT_S.default}): if the run has not ended by then, returns it ` +
          'as it is; call get_run with its id later. Counts one screenshot against the monthly quota of this API key.',
        inputSchema: RUN_BROWSER_SESSION_INPUT_SCHEMA,
        annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
      },
      (args, extra) => this.asToolResult(() => this.runBrowserSession(caller, args, extra.signal)),
    );
    server.registerTool(
      'get_run',
      {
        title: 'Get a browser session run',
        description:
          'Returns a browser session run of this account by id as JSON (see run_browser_session); with includeScreenshots true and the run ended, ' +
          'also its step screenshots as images. Does not count against the quota.',
        inputSchema: GET_RUN_INPUT_SCHEMA,
        annotations: READS_ACCOUNT,
      },
      (args) => this.asToolResult(() => this.getRun(caller, args)),
    );
    server.registerTool(
      'create_monitor',
      {
        title: 'Watch a page for changes',
        description:
          'Creates a monitor: the page is captured on a schedule (schedule {intervalSeconds} or {cron, timezone}) and each image is compared ' +
          'with the previous one; a change is listed by list_monitor_changes (and sent as the monitor.changed webhook). diff.ignoreSelectors ' +
          'masks elements such as clocks or ads before each capture. Takes the capture options of take_screenshot (not pdf, cache or extract). ' +
          'Returns the monitor as JSON {id, url, schedule, diff, enabled, nextCheckAt, …}. Each check counts one screenshot against the ' +
          'monthly quota of this API key.',
        inputSchema: CREATE_MONITOR_INPUT_SCHEMA,
        annotations: STARTS_WORK,
      },
      (args) => this.asToolResult(() => this.createMonitor(caller, args)),
    );
    server.registerTool(
      'list_monitor_changes',
      {
        title: 'List the changes monitors found',
        description:
          'Returns the checks of this account’s monitors that found a change, newest first, as JSON {changes: [{monitorId, checkId, url, ' +
          'diffRatio, diffPixels, regions, screenshotUrl, baselineUrl, diffUrl, createdAt}]}; monitorId limits them to one monitor, since ' +
          '(ISO 8601) to those found at or after that time. Does not count against the quota.',
        inputSchema: LIST_MONITOR_CHANGES_INPUT_SCHEMA,
        annotations: READS_ACCOUNT,
      },
      (args) => this.asToolResult(() => this.listMonitorChanges(caller, args)),
    );
    server.registerTool(
      'crawl_site',
      {
        title: 'Crawl a whole site',
        description:
          "Discovers a site's pages (robots.txt, sitemaps, the links of each captured page) within scope, include/exclude, maxDepth and maxPages, " +
          'captures each with an ordinary screenshot job, and when every job ended stores one ZIP of every result and manifest.json (bundleUrl). ' +
          'Same arguments as POST /v1/crawls, plus wait (seconds to wait for the end). Returns JSON {crawl: {id, status, pagesFound, pagesQueued, ' +
          'pagesDone, pagesFailed, stoppedReason, bundleUrl, …}, pages: [{url, depth, jobId, status, resultUrl, title}] (the first 20)}. ' +
          'Each page counts one screenshot against the monthly quota of this API key.',
        inputSchema: CRAWL_SITE_INPUT_SCHEMA,
        annotations: STARTS_WORK,
      },
      (args, extra) => this.asToolResult(() => this.crawlSite(caller, args, extra.signal)),
    );
    return server;
  }

  /**
   * `crawl_site` (CONTRACT.md, "Crawls": "waits up to `wait` seconds, then returns the crawl object and
   * its first pages"): creates the crawl through {@link CrawlsService.create}, waits for its end
   * ({@link waitForEnd}) and returns it with its first 20 pages. Throws the service's {@link ApiError}s.
   */
  private async crawlSite(caller: AuthenticatedKey, args: unknown, signal?: AbortSignal): Promise<CallToolResult> {
    const { wait = CRAWL_WAIT_S.default, ...request } = validateToolInput(CrawlSiteInput, args);
    const created = await this.crawls.create(caller, request);
    const crawl = await this.waitForEnd(created, (id) => this.crawls.get(caller, id), crawlEnded, wait, signal);
    const pages = await this.crawls.listPages(caller, crawl.id, { limit: 20 });
    const result = { crawl, pages: pages.data };
    return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result };
  }

  /**
   * `run_browser_session`: validates the arguments (as `POST /v1/runs`, plus `timeoutSeconds`),
   * creates the run through {@link RunsService.create}, then waits for its end ({@link waitForEnd})
   * up to `timeoutSeconds` or until the client goes away.
   * Throws the service's {@link ApiError}s (400 `VALIDATION_FAILED`, `TARGET_NOT_ALLOWED`, quota).
   */
  async runBrowserSession(caller: AuthenticatedKey, args: unknown, signal?: AbortSignal): Promise<CallToolResult> {
    const { timeoutSeconds = RUN_WAIT_S.default, ...request } = validateToolInput(RunBrowserSessionInput, args);
    const created = await this.runs.create(caller, request);
    const run = await this.waitForEnd(created, (id) => this.runs.get(caller, id), runEnded, timeoutSeconds, signal);
    return this.runResult(caller, run, true);
  }

  /** `get_run`: the caller's run; throws 404 `NOT_FOUND` for an unknown id or another account's. */
  async getRun(caller: AuthenticatedKey, args: unknown): Promise<CallToolResult> {
    const { id, includeScreenshots = false } = validateToolInput(GetRunInput, args);
    return this.runResult(caller, await this.runs.get(caller, id), includeScreenshots);
  }

  /**
   * The result for a run: the run JSON (text and structured content), then, once it ended and when
   * asked, each step screenshot as an image after a text naming its step (as many as fit in
   * {@link INLINE_IMAGE_MAX_BYTES}). A failed run is an error result starting `RUN_FAILED: <finalizationError>`.
   */
  private async runResult(caller: AuthenticatedKey, run: RunDto, includeScreenshots: boolean): Promise<CallToolResult> {
    const structured = run as unknown as Record<string, unknown>;
    const content: CallToolResult['content'] = [{ type: 'text', text: JSON.stringify(run) }];
    if (!runEnded(run)) {
      content.push({
        type: 'text',
        text: `The run is not finished yet (status ${run.status}). Call get_run with id "${run.id}" in a few seconds.`,
      });
      return { content, structuredContent: structured };
    }
    if (includeScreenshots) {
      for (const shot of await this.runs.stepScreenshots(caller, run.id, INLINE_IMAGE_MAX_BYTES)) {
        if (!shot.file.data) {
          content.push({ type: 'text', text: `Screenshot of step ${shot.index} not inline (size limit): ${shot.url}` });
          continue;
        }
        content.push({ type: 'text', text: `Screenshot of step ${shot.index}:` });
        content.push({ type: 'image', data: shot.file.data.toString('base64'), mimeType: shot.file.contentType });
      }
    }
    if (run.status === 'failed') {
      return {
        content: [{ type: 'text', text: `RUN_FAILED: ${run.finalizationError ?? 'the run failed'}` }, ...content],
        structuredContent: structured,
        isError: true,
      };
    }
    return { content, structuredContent: structured };
  }

  /**
   * `take_screenshot`: validates the arguments (as `POST /v1/screenshot`, plus `wait` or
   * `timeoutSeconds`), creates the job (queue class `interactive`) through {@link ScreenshotsService.create}, then waits for it
   * as `Prefer: wait=N` does ({@link waitForJob}): the image when it ends in time, else its id and
   * status. Throws the service's {@link ApiError}s (400 `VALIDATION_FAILED`, `TARGET_NOT_ALLOWED`, quota).
   */
  async takeScreenshot(caller: AuthenticatedKey, args: unknown, signal?: AbortSignal): Promise<CallToolResult> {
    const { seconds, request } = splitWait(validateToolInput(TakeScreenshotInput, args));
    const job = await this.waitForJob(
      caller,
      await this.screenshots.create(caller, request, { queueClass: 'interactive' }),
      seconds,
      signal,
    );
    return this.jobResult(caller, job, true);
  }

  private waitForJob(caller: AuthenticatedKey, job: ScreenshotJobDto, seconds: number, signal?: AbortSignal): Promise<ScreenshotJobDto> {
    return this.waitForEnd(job, (id) => this.screenshots.get(caller, id), hasEnded, seconds, signal);
  }

  /**
   * `work` (a job or run) once it ended, or as `reload` reads it after `seconds` or when the client
   * went away (`signal`): woken by its end ({@link WorkEndWaiter}, as `Prefer: wait=N`), never polling.
   */
  private async waitForEnd<T extends { id: string }>(
    work: T,
    reload: (id: string) => Promise<T>,
    isEnded: (work: T) => boolean,
    seconds: number,
    signal?: AbortSignal,
  ): Promise<T> {
    if (isEnded(work) || signal?.aborted) return work;
    const ended = this.waiter.waitForEnd(work.id, seconds * 1000, async () => {
      const now = await reload(work.id);
      return isEnded(now) ? now : null;
    });
    // Once the client has gone nobody reads `ended`: its failure must not go unhandled.
    ended.catch(() => undefined);
    const gone = signal ? new Promise<null>((resolve) => signal.addEventListener('abort', () => resolve(null), { once: true })) : null;
    const settled = await (gone ? Promise.race([ended, gone]) : ended);
    return settled ?? (await reload(work.id));
  }

  /**
   * `read_page`: a capture with `extract` markdown and metadata (added to any `extract` given) and
   * `format: "none"` unless a format is given, validated and counted as `take_screenshot`; returns the
   * markdown as text (cut at {@link READ_PAGE_MARKDOWN_MAX_CHARS} characters, then `…[truncated]`) and
   * the metadata as structured content ({@link READ_PAGE_OUTPUT_SCHEMA}; CONTRACT.md, "Extracted content").
   * A failed capture is an error result `CAPTURE_FAILED: …`; one not finished in time returns `{ id, status }`
   * and a hint to poll get_screenshot.
   */
  async readPage(caller: AuthenticatedKey, args: unknown, signal?: AbortSignal): Promise<CallToolResult> {
    const { seconds, request } = splitWait(validateToolInput(TakeScreenshotInput, args));
    const extract = [...new Set([...(request.extract ?? []), 'markdown' as const, 'metadata' as const])];
    const created = await this.screenshots.create(
      caller,
      { ...request, extract, format: request.format ?? 'none' },
      { queueClass: 'interactive' },
    );
    const job = await this.waitForJob(caller, created, seconds, signal);
    if (job.status === 'failed') return this.jobResult(caller, job, false);
    if (job.status !== 'done') {
      const running: ReadPageOutput = { id: job.id, status: job.status };
      const hint = `The page is not read yet (status ${job.status}). Call get_screenshot with id "${job.id}" in a few seconds.`;
      return {
        content: [
          { type: 'text', text: JSON.stringify(running) },
          { type: 'text', text: hint },
        ],
        structuredContent: running,
      };
    }
    const markdown = (await this.screenshots.openExtracted(caller, job.id, 'markdown')) ?? '';
    // Cut at a character boundary: never between the halves of a surrogate pair.
    const cut = READ_PAGE_MARKDOWN_MAX_CHARS - (/[\uD800-\uDBFF]/.test(markdown.charAt(READ_PAGE_MARKDOWN_MAX_CHARS - 1)) ? 1 : 0);
    const text = markdown.length > READ_PAGE_MARKDOWN_MAX_CHARS ? `${markdown.slice(0, cut)}…[truncated]` : markdown;
    const metadata: ReadPageOutput = job.extracted?.metadata ?? {};
    return { content: [{ type: 'text', text }], structuredContent: metadata };
  }

  /** `get_screenshot`: the caller's job; throws 404 `NOT_FOUND` for an unknown id or another account's. */
  async getScreenshot(caller: AuthenticatedKey, args: unknown): Promise<CallToolResult> {
    const { id, includeImage = false } = validateToolInput(GetScreenshotInput, args);
    return this.jobResult(caller, await this.screenshots.get(caller, id), includeImage);
  }

  /** `get_quota`: the key's plan, monthly cap, usage this calendar month (UTC) and reset time ({@link QuotaService.status}). */
  async getQuota(caller: AuthenticatedKey): Promise<CallToolResult> {
    const status = await this.quota.status(caller);
    const quota: QuotaOutput = { ...status, resetAt: status.resetAt.toISOString() };
    return { content: [{ type: 'text', text: JSON.stringify(quota) }], structuredContent: quota };
  }

  /**
   * The result for a job: for `done`, the image (when `includeImage` and it is small enough) then the
   * job JSON; for `pending`/`processing`, the job JSON and a hint to poll; for `failed`, an error
   * result `CAPTURE_FAILED: <browser error>` with the job JSON.
   */
  private async jobResult(caller: AuthenticatedKey, job: ScreenshotJobDto, includeImage: boolean): Promise<CallToolResult> {
    const brief: ScreenshotOutput = {
      id: job.id,
      status: job.status,
      url: job.url,
      format: job.format,
      width: job.width,
      height: job.height,
    };
    const json = { type: 'text' as const, text: JSON.stringify(brief) };
    if (job.status === 'failed') {
      return {
        content: [{ type: 'text', text: `CAPTURE_FAILED: ${job.error ?? 'capture failed'}` }, json],
        structuredContent: brief,
        isError: true,
      };
    }
    if (job.status !== 'done') {
      const hint = `The capture is not finished yet (status ${job.status}). Call get_screenshot with id "${job.id}" in a few seconds.`;
      return { content: [json, { type: 'text', text: hint }], structuredContent: brief };
    }
    // format none has no image: only the extracted content (its URLs are in the job).
    if (!includeImage || job.url === null) return { content: [json], structuredContent: brief };
    // An animation is a URL, never inline bytes (CONTRACT.md, "Animated captures").
    if (isAnimationFormat(job.format)) {
      const note = `The ${job.format} animation is at url (its first frame at thumbnailUrl).`;
      return { content: [json, { type: 'text', text: note }], structuredContent: brief };
    }
    const file = await this.screenshots.openResult(caller, job.id, INLINE_IMAGE_MAX_BYTES);
    if (!file) {
      return {
        content: [json, { type: 'text', text: 'The image file has expired and is no longer available.' }],
        structuredContent: brief,
      };
    }
    if (!file.data) {
      const note = `The image is ${file.size} bytes, more than the ${INLINE_IMAGE_MAX_BYTES} bytes returned inline: download it from url.`;
      return { content: [json, { type: 'text', text: note }], structuredContent: brief };
    }
    const data = file.data.toString('base64');
    // A PDF is not an image: it is returned as an embedded resource (MCP `resource` content with a blob).
    const result: CallToolResult['content'][number] =
      job.format === 'pdf'
        ? { type: 'resource', resource: { uri: job.url as string, mimeType: file.contentType, blob: data } }
        : { type: 'image', data, mimeType: file.contentType };
    return { content: [result, json], structuredContent: brief };
  }

  /** Runs a tool body; an {@link ApiError} becomes an error result `<CODE>: <message>`, anything else `INTERNAL_ERROR`. */
  /** `create_monitor`: validates as `POST /v1/monitors` and creates the monitor ({@link MonitorsService.create}). */
  private async createMonitor(caller: AuthenticatedKey, args: unknown): Promise<CallToolResult> {
    const monitor = await this.monitors.create(caller, validateToolInput(CreateMonitorInput, args));
    return { content: [{ type: 'text', text: JSON.stringify(monitor) }], structuredContent: { ...monitor } };
  }

  /** `list_monitor_changes`: the account's `changed` checks ({@link MonitorsService.listChanges}). */
  private async listMonitorChanges(caller: AuthenticatedKey, args: unknown): Promise<CallToolResult> {
    const input = validateToolInput(ListMonitorChangesInput, args);
    const changes = await this.monitors.listChanges(caller, {
      monitorId: input.monitorId,
      since: input.since ? new Date(input.since) : undefined,
      limit: input.limit ?? 20,
    });
    const data = changes.map((c) => ({
      monitorId: c.monitorId,
      checkId: c.id,
      url: c.url,
      diffRatio: c.diffRatio,
      diffPixels: c.diffPixels,
      regions: c.regions,
      screenshotUrl: c.screenshotUrl,
      baselineUrl: c.baselineUrl,
      diffUrl: c.diffUrl,
      createdAt: c.createdAt,
    }));
    return { content: [{ type: 'text', text: JSON.stringify({ changes: data }) }], structuredContent: { changes: data } };
  }

  private async asToolResult(run: () => Promise<CallToolResult>): Promise<CallToolResult> {
    try {
      return await run();
    } catch (err) {
      if (err instanceof ApiError) {
        const details = err.details ? `\n${JSON.stringify(err.details)}` : '';
        return { content: [{ type: 'text', text: `${err.code}: ${err.message}${details}` }], isError: true };
      }
      this.logger.error('MCP tool failed', (err as Error).stack);
      return { content: [{ type: 'text', text: `${ErrorCode.INTERNAL_ERROR}: Internal server error` }], isError: true };
    }
  }
}

function runEnded(run: RunDto): boolean {
  return run.status === 'completed' || run.status === 'failed';
}

function crawlEnded(crawl: CrawlDto): boolean {
  return crawl.status === 'completed' || crawl.status === 'failed' || crawl.status === 'canceled';
}

function hasEnded(job: ScreenshotJobDto): boolean {
  return job.status === 'done' || job.status === 'failed';
}
