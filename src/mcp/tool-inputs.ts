import { plainToInstance } from 'class-transformer';
import { IsBoolean, IsInt, IsISO8601, IsOptional, IsString, Matches, Max, Min, validateSync } from 'class-validator';
import { z } from 'zod';
import { CAPTURE_LIMITS, CAPTURE_OPTION_NAMES, captureOptionJsonSchema, SESSION_OPTION_NAMES } from '../capture/capture-options';
import { ApiError } from '../common/api-error';
import { PREFER_WAIT_MAX_S } from '../idempotency/prefer-wait';
import { assertAcceptableBody } from '../common/request-body-rules';
import { jsonSchemaOf, toFieldErrors } from '../common/validation';
import { SAVE_PROFILE_SCHEMA } from '../profiles/dto/profile.dto';
import { CreateScreenshotDto } from '../screenshots/dto/create-screenshot.dto';
import { CreateRunDto } from '../runs/dto/create-run.dto';
import {
  CreateMonitorDto,
  DIFF_JSON_SCHEMA,
  MONITOR_LIMITS,
  MONITOR_OPTION_NAMES,
  SCHEDULE_JSON_SCHEMA,
} from '../monitors/dto/monitor.dto';
import { RUN_LIMITS, STEP_ACTIONS } from '../runs/run-steps';
import { CRAWL_LIMITS, CreateCrawlDto } from '../crawls/dto/create-crawl.dto';
import { CRAWL_DISCOVER, CRAWL_SCOPES } from '../crawls/crawl-options';

/**
 * How long `take_screenshot` waits for its job, in seconds: bounded as `Prefer: wait=N` is
 * (CONTRACT.md, "Synchronous answers").
 */
export const SCREENSHOT_WAIT_S = { min: 1, max: PREFER_WAIT_MAX_S, default: 30 } as const;

/**
 * Arguments of `take_screenshot`: the REST body of `POST /v1/screenshot` (same rules, inherited from
 * {@link CreateScreenshotDto}) plus how long to wait for the result: `wait`, or its older name
 * `timeoutSeconds` (not both).
 */
export class TakeScreenshotInput extends CreateScreenshotDto {
  @IsOptional()
  @IsInt()
  @Min(SCREENSHOT_WAIT_S.min)
  @Max(SCREENSHOT_WAIT_S.max)
  wait?: number;

  @IsOptional()
  @IsInt()
  @Min(SCREENSHOT_WAIT_S.min)
  @Max(SCREENSHOT_WAIT_S.max)
  timeoutSeconds?: number;
}

/**
 * The seconds to wait of validated `take_screenshot` arguments and the capture request without them.
 * Throws 400 `VALIDATION_FAILED` when both `wait` and `timeoutSeconds` are given.
 */
export function splitWait(input: TakeScreenshotInput): { seconds: number; request: CreateScreenshotDto } {
  const { wait, timeoutSeconds, ...request } = input;
  if (wait !== undefined && timeoutSeconds !== undefined) {
    throw ApiError.validation([{ field: 'wait', message: 'give wait or timeoutSeconds, not both' }]);
  }
  return { seconds: wait ?? timeoutSeconds ?? SCREENSHOT_WAIT_S.default, request };
}

/** Arguments of `get_screenshot`. */
export class GetScreenshotInput {
  @IsString()
  id: string;

  @IsOptional()
  @IsBoolean()
  includeImage?: boolean;
}

/**
 * Validates tool arguments exactly as the REST validation pipe validates a body (class-validator,
 * unknown and reserved fields rejected, no NUL characters, no type coercion) and returns the typed input.
 * Throws 400 `VALIDATION_FAILED` with `details.fields`.
 */
export function validateToolInput<T extends object>(type: new () => T, args: unknown): T {
  assertAcceptableBody(args);
  const input = plainToInstance(type, args ?? {});
  const errors = validateSync(input, { whitelist: true, forbidNonWhitelisted: true, stopAtFirstError: true });
  if (errors.length) throw ApiError.validation(toFieldErrors(errors));
  return input;
}

/**
 * A tool argument as advertised to the client: `jsonSchema` is what `tools/list` shows, while the
 * SDK passes the value through untouched, so that {@link validateToolInput} (the service's one set of
 * rules) decides and a failure carries the contract's `VALIDATION_FAILED` code instead of the SDK's
 * generic message.
 */
function advertised(jsonSchema: Record<string, unknown>, required = false) {
  return required ? z.unknown().meta(jsonSchema) : z.unknown().optional().meta(jsonSchema);
}

/** An object of advertised arguments; unknown keys reach the handler, which rejects them. */
function advertisedObject(shape: Record<string, z.ZodType>) {
  return z.looseObject(shape).meta({ additionalProperties: false });
}

/** An advertised whole number of seconds to wait, from `limits.min` to `limits.max` (default `limits.default`). */
function waitSeconds(limits: { readonly min: number; readonly max: number; readonly default: number }, description: string) {
  return advertised({ type: 'integer', minimum: limits.min, maximum: limits.max, default: limits.default, description });
}

const L = CAPTURE_LIMITS;

/** A tool's required `url`: an absolute http(s) URL of at most `urlMaxLength` characters, as the REST body's `url`. */
function pageUrl(description: string) {
  return advertised({ type: 'string', format: 'uri', maxLength: L.urlMaxLength, description }, true);
}

/** Input schema of `take_screenshot`: `url`, every capture option of the options table (`CAPTURE_OPTION_TABLE`), and `timeoutSeconds`. */
export const TAKE_SCREENSHOT_INPUT_SCHEMA = advertisedObject({
  url: pageUrl(`Absolute http(s) URL of the page to capture (at most ${L.urlMaxLength} characters).`),
  ...Object.fromEntries(CAPTURE_OPTION_NAMES.map((name) => [name, advertised(captureOptionJsonSchema(name))])),
  wait: waitSeconds(
    SCREENSHOT_WAIT_S,
    'Seconds to wait for the capture (as the REST header Prefer: wait=N): the image when it ends in time, else the job id and status without it.',
  ),
  timeoutSeconds: waitSeconds(SCREENSHOT_WAIT_S, 'The older name of wait (give one of them).'),
});

/** Input schema of `get_screenshot`. */
export const GET_SCREENSHOT_INPUT_SCHEMA = advertisedObject({
  id: advertised({ type: 'string', pattern: '^scr_[0-9A-Za-z]+$', description: 'Job id returned by take_screenshot (scr_…).' }, true),
  includeImage: advertised({ type: 'boolean', default: false, description: 'Also return the image when the job is done.' }),
});

/** Input schema of `get_quota`: no arguments (any sent are ignored). */
export const GET_QUOTA_INPUT_SCHEMA = z.object({});

/** How long `run_browser_session` waits for its run, in seconds (an MCP-only option). */
export const RUN_WAIT_S = { min: 1, max: 300, default: 120 } as const;

/**
 * Arguments of `run_browser_session`: the REST body of `POST /v1/runs` (same rules, inherited from
 * {@link CreateRunDto}) plus how long to wait for the run to end.
 */
export class RunBrowserSessionInput extends CreateRunDto {
  @IsOptional()
  @IsInt()
  @Min(RUN_WAIT_S.min)
  @Max(RUN_WAIT_S.max)
  timeoutSeconds?: number;
}

/** Arguments of `get_run`. */
export class GetRunInput {
  @IsString()
  id: string;

  @IsOptional()
  @IsBoolean()
  includeScreenshots?: boolean;
}

const R = RUN_LIMITS;

/** Input schema of `run_browser_session`: the body of `POST /v1/runs` (its session options from the options table) and `timeoutSeconds`, self-contained (no `$ref`s). */
export const RUN_BROWSER_SESSION_INPUT_SCHEMA = advertisedObject({
  url: pageUrl('Absolute http(s) URL of the first page.'),
  steps: advertised({
    type: 'array',
    maxItems: R.maxSteps,
    description:
      `Up to ${R.maxSteps} steps run in order, each an object with "action" and its fields: goto {url}, click {selector}, fill {selector, value, sensitive?}, ` +
      'press {key, selector?}, hover {selector}, select {selector, value}, check {selector}, uncheck {selector}, scroll {selector | y}, ' +
      `waitForSelector {selector}, waitForUrl {url: exact or glob}, wait {ms: 0-${R.waitMs.max}}, evaluate {script} (JSON result kept), ` +
      'screenshot {name?, fullPage?, selector?, format?: png|jpeg|webp}. Every step may have optional: true (its failure is recorded and the run goes on) ' +
      `and timeoutMs (${R.stepTimeoutMs.min}-${R.stepTimeoutMs.max}, default ${R.stepTimeoutMs.default}). ` +
      'fill with sensitive: true keeps the value (a password) out of everything the service stores, logs or returns.',
    items: { type: 'object', required: ['action'], properties: { action: { type: 'string', enum: [...STEP_ACTIONS] } } },
  }),
  video: advertised({ type: 'boolean', default: true, description: 'Record a WebM video of the session (its URL is in the result).' }),
  timeoutMs: advertised({
    type: 'integer',
    minimum: R.timeoutMs.min,
    maximum: R.timeoutMs.max,
    default: R.timeoutMs.default,
    description: "The whole run's time budget in ms.",
  }),
  ...Object.fromEntries(SESSION_OPTION_NAMES.map((name) => [name, advertised(captureOptionJsonSchema(name))])),
  saveProfile: advertised({
    ...jsonSchemaOf(SAVE_PROFILE_SCHEMA),
    description:
      "Record a login: when the run completes, the session's cookies and local storage (filtered to the allowedDomains) become the browser " +
      'profile { name, allowedDomains } or replace the state of { profileId }; the run says savedProfileId.',
  }),
  timeoutSeconds: waitSeconds(
    RUN_WAIT_S,
    'Seconds to wait for the run to end before returning it as it is (then call get_run with its id).',
  ),
});

/** Input schema of `get_run`. */
export const GET_RUN_INPUT_SCHEMA = advertisedObject({
  id: advertised({ type: 'string', pattern: '^run_[0-9A-Za-z]+$', description: 'Run id returned by run_browser_session (run_…).' }, true),
  includeScreenshots: advertised({ type: 'boolean', default: false, description: "Also return the run's step screenshots once it ended." }),
});

/** Arguments of `create_monitor`: the body of `POST /v1/monitors` (same rules, inherited from {@link CreateMonitorDto}). */
export class CreateMonitorInput extends CreateMonitorDto {}

/** Arguments of `list_monitor_changes`. */
export class ListMonitorChangesInput {
  @IsOptional()
  @IsString()
  @Matches(/^mon_[0-9A-Za-z]{24}$/, { message: 'must be a monitor id (mon_…)' })
  monitorId?: string;

  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'must be an ISO 8601 date-time' })
  since?: string;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(100)
  limit?: number;
}

/** Input schema of `create_monitor`: `url`, `schedule`, `diff`, `enabled`, `description` and the capture options a monitor takes. */
export const CREATE_MONITOR_INPUT_SCHEMA = advertisedObject({
  url: pageUrl('Absolute http(s) URL of the page to watch.'),
  schedule: advertised(
    { ...SCHEDULE_JSON_SCHEMA, description: 'When to check: {"intervalSeconds": n} or {"cron": "five fields", "timezone": "IANA zone"}.' },
    true,
  ),
  diff: advertised({
    ...DIFF_JSON_SCHEMA,
    description: 'How images are compared: threshold, minChangeRatio, ignoreSelectors, ignoreRegions.',
  }),
  enabled: advertised({ type: 'boolean', default: true, description: 'false: created paused.' }),
  description: advertised({ type: 'string', maxLength: MONITOR_LIMITS.descriptionMaxLength, description: 'Free-text label.' }),
  ...Object.fromEntries(MONITOR_OPTION_NAMES.map((name) => [name, advertised(captureOptionJsonSchema(name))])),
});

/** Input schema of `list_monitor_changes`. */
export const LIST_MONITOR_CHANGES_INPUT_SCHEMA = advertisedObject({
  monitorId: advertised({ type: 'string', pattern: '^mon_[0-9A-Za-z]+$', description: 'Only changes of this monitor (mon_…).' }),
  since: advertised({ type: 'string', format: 'date-time', description: 'Only changes found at or after this time (ISO 8601).' }),
  limit: advertised({ type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'At most this many changes, newest first.' }),
});

/** How long `crawl_site` waits for the crawl to end, in seconds. */
export const CRAWL_WAIT_S = { min: 0, max: 300, default: 60 } as const;

/** Arguments of `crawl_site`: the body of `POST /v1/crawls` (same rules, inherited from {@link CreateCrawlDto}) and `wait`. */
export class CrawlSiteInput extends CreateCrawlDto {
  @IsOptional()
  @IsInt()
  @Min(CRAWL_WAIT_S.min)
  @Max(CRAWL_WAIT_S.max)
  wait?: number;
}

const C = CRAWL_LIMITS;
const globs = (description: string) =>
  advertised({
    type: 'array',
    minItems: C.globs.min,
    maxItems: C.globs.max,
    items: { type: 'string', maxLength: C.globs.maxLength },
    description,
  });

/** Input schema of `crawl_site`: the body of `POST /v1/crawls` and `wait`. */
export const CRAWL_SITE_INPUT_SCHEMA = advertisedObject({
  url: pageUrl('Absolute http(s) URL where the crawl starts.'),
  discover: advertised({
    type: 'string',
    enum: [...CRAWL_DISCOVER],
    default: 'both',
    description: 'Find pages from sitemaps, links, or both.',
  }),
  maxPages: advertised({
    type: 'integer',
    minimum: C.maxPages.min,
    maximum: C.maxPages.max,
    description: `Most pages captured (default ${C.maxPages.default}; the plan caps it: free 20, starter 200, pro 1,000).`,
  }),
  maxDepth: advertised({
    type: 'integer',
    minimum: C.maxDepth.min,
    maximum: C.maxDepth.max,
    default: C.maxDepth.default,
    description: 'Links followed from the start URL.',
  }),
  include: globs('Only pages whose path and query match one of these globs (* any characters).'),
  exclude: globs('Pages whose path and query match one of these globs are left out.'),
  scope: advertised({
    type: 'string',
    enum: [...CRAWL_SCOPES],
    default: 'host',
    description: 'host: the start host only; domain: its hosts below it too.',
  }),
  respectRobots: advertised({ type: 'boolean', default: true, description: 'Follow robots.txt rules for user agent Glimpse.' }),
  capture: advertised({
    type: 'object',
    properties: Object.fromEntries(CAPTURE_OPTION_NAMES.map((name) => [name, captureOptionJsonSchema(name)])),
    description: 'Capture options of every page, as take_screenshot takes them (extract included).',
  }),
  wait: waitSeconds(CRAWL_WAIT_S, 'Seconds to wait for the crawl to end before returning it as it is.'),
});
