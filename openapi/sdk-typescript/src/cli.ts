/**
 * `glimpse` — the SDK's command line (Node ≥ 20): `glimpse capture <url> -o shot.png` and
 * `glimpse run <url> --steps steps.json -o run.json`, `glimpse crawl <url> --max-pages 50 --out site.zip`, and `glimpse render-url <url> --render-key rk_…` (prints a
 * signed render link; the secret from `GLIMPSE_RENDER_SECRET`), and `glimpse monitors create|list|get|checks|check|pause|resume|delete`
 * and `glimpse profiles add|list|delete` (each prints JSON on stdout). Reads `GLIMPSE_API_KEY` and `GLIMPSE_BASE_URL`.
 * Exit codes (README of the SDK, "CLI"): 0 success, 1 the API answered an error, 2 usage error,
 * 3 the capture or run ended `failed`, 4 timed out, 5 the API could not be reached.
 */
import { Command, CommanderError, Option } from 'commander';
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { CAPTURE_FLAGS, type FlagSpec, kebab, RUN_FLAGS } from './cli-options';
import { Glimpse } from './client';
import { GlimpseConnectionError, GlimpseError, GlimpseTimeoutError } from './errors';
import { type RenderLinkFormat, signRenderUrl } from './render-links';
import type {
  Crawl,
  CreateCrawlRequest,
  CreateMonitorRequest,
  CreateProfileRequest,
  CreateRunRequest,
  CreateScreenshotRequest,
} from './types';

declare const __SDK_VERSION__: string;

export const EXIT = { ok: 0, apiError: 1, usage: 2, failed: 3, timeout: 4, unreachable: 5 } as const;

class UsageError extends Error {}

function parseValue(field: string, spec: FlagSpec, text: string, previous: unknown): unknown {
  switch (spec.kind) {
    case 'integer':
    case 'number': {
      const n = Number(text);
      if (text.trim() === '' || !Number.isFinite(n) || (spec.kind === 'integer' && !Number.isInteger(n))) {
        throw new UsageError(`--${kebab(field)} must be ${spec.kind === 'integer' ? 'an integer' : 'a number'}, got "${text}"`);
      }
      return n;
    }
    case 'json': {
      const source = text.startsWith('@') ? readFileSync(text.slice(1), 'utf8') : text;
      try {
        return JSON.parse(source);
      } catch (err) {
        throw new UsageError(`--${kebab(field)} is not valid JSON: ${(err as Error).message}`);
      }
    }
    case 'list':
      return [...((previous as string[] | undefined) ?? []), text];
    default:
      return text;
  }
}

/** Adds one `--kebab-name` option per field; values are parsed (and checked) when the command runs. */
function addFieldOptions(command: Command, flags: Record<string, FlagSpec>): void {
  for (const [field, spec] of Object.entries(flags)) {
    const option =
      spec.kind === 'boolean'
        ? new Option(`--${kebab(field)}`, spec.description)
        : new Option(`--${kebab(field)} <value>`, spec.description);
    if (spec.kind === 'list') option.argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]);
    command.addOption(option);
  }
}

/** The request fields among the parsed options (commander camel-cases `--full-page` to `fullPage`). */
function fieldsOf(options: Record<string, unknown>, flags: Record<string, FlagSpec>): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [field, spec] of Object.entries(flags)) {
    const value = options[field];
    if (value === undefined) continue;
    fields[field] = spec.kind === 'boolean' || spec.kind === 'list' ? value : parseValue(field, spec, String(value), undefined);
  }
  return fields;
}

function clientFrom(options: { apiKey?: string; baseUrl?: string }): Glimpse {
  if (!options.apiKey) throw new UsageError('no API key: set GLIMPSE_API_KEY (or pass --api-key)');
  if (!options.baseUrl) throw new UsageError('no API address: set GLIMPSE_BASE_URL, e.g. https://glimpse.example.com (or pass --base-url)');
  return new Glimpse({ apiKey: options.apiKey, baseUrl: options.baseUrl });
}

function waitTimeout(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const ms = Number(text);
  if (!Number.isInteger(ms) || ms <= 0) throw new UsageError(`--wait-timeout must be a positive integer of ms, got "${text}"`);
  return ms;
}

/** Progress on stderr: one line per status change, with the seconds since the start. */
function progress(stderr: NodeJS.WritableStream, id: string) {
  const started = Date.now();
  let last = '';
  return ({ status }: { status: string }) => {
    if (status === last) return;
    last = status;
    stderr.write(`${id} ${status} (${((Date.now() - started) / 1000).toFixed(1)} s)\n`);
  };
}

const kB = (bytes: number) => `${(bytes / 1024).toFixed(1)} kB`;

/** The options both commands share: how long to wait (ms, default `defaultWaitMs`) and an own `Idempotency-Key`. */
function addWaitOptions(command: Command, defaultWaitMs: number): void {
  command
    .option('--wait-timeout <ms>', `give up waiting after this many ms (default ${defaultWaitMs})`)
    .option('--idempotency-key <key>', 'your own Idempotency-Key for the create call');
}

/** Builds the program; `io` lets tests capture the streams. */
export function buildProgram(io: { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream } = process): Command {
  const program = new Command('glimpse')
    .description('Capture screenshots and run browser sessions with a Glimpse server.')
    .version(typeof __SDK_VERSION__ === 'string' ? __SDK_VERSION__ : 'dev')
    .addOption(new Option('--api-key <key>', 'API key sk_live_…').env('GLIMPSE_API_KEY'))
    .addOption(new Option('--base-url <url>', 'the server, e.g. https://glimpse.example.com').env('GLIMPSE_BASE_URL'))
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) })
    .exitOverride()
    .showHelpAfterError();

  const capture = program
    .command('capture')
    .description('capture <url>, wait for it and save the file; prints the job as JSON on stdout')
    .argument('<url>', 'page to capture (http or https)')
    .requiredOption('-o, --output <file>', 'where to save the image or PDF');
  addWaitOptions(capture, 120_000);
  addFieldOptions(capture, CAPTURE_FLAGS);
  capture.action(async (url: string, options: Record<string, unknown>) => {
    const glimpse = clientFrom(program.opts());
    const body = { url, ...fieldsOf(options, CAPTURE_FLAGS) } as CreateScreenshotRequest;
    const job = await glimpse.screenshots.create(body, { idempotencyKey: options.idempotencyKey as string | undefined });
    const onProgress = progress(io.stderr, job.id);
    onProgress(job);
    const finished = await glimpse.screenshots.waitFor(job.id, {
      timeoutMs: waitTimeout(options.waitTimeout as string | undefined),
      onProgress,
    });
    io.stdout.write(`${JSON.stringify(finished)}\n`);
    if (finished.status === 'failed') {
      io.stderr.write(`glimpse: capture ${finished.id} failed: ${finished.error}\n`);
      process.exitCode = EXIT.failed;
      return;
    }
    const file = await glimpse.screenshots.download(finished);
    writeFileSync(String(options.output), file.data);
    io.stderr.write(`saved ${options.output} (${file.contentType}, ${kB(file.data.length)})\n`);
  });

  const run = program
    .command('run')
    .description('start a browser session run on <url>, wait for it, save the run as JSON and its video beside it')
    .argument('<url>', 'first page (http or https)')
    .requiredOption('--steps <file>', 'JSON file with the steps array (README "Browser session runs")')
    .requiredOption('-o, --output <file>', 'where to save the run JSON; the video goes beside it as <name>.webm');
  addWaitOptions(run, 330_000);
  addFieldOptions(run, RUN_FLAGS);
  run.action(async (url: string, options: Record<string, unknown>) => {
    const glimpse = clientFrom(program.opts());
    const steps = parseValue('steps', { kind: 'json', description: '' }, `@${options.steps}`, undefined);
    if (!Array.isArray(steps)) throw new UsageError(`--steps: ${options.steps} must hold a JSON array of steps`);
    const body = { url, steps, ...fieldsOf(options, RUN_FLAGS) } as CreateRunRequest;
    const created = await glimpse.runs.create(body, { idempotencyKey: options.idempotencyKey as string | undefined });
    const onProgress = progress(io.stderr, created.id);
    onProgress(created);
    const finished = await glimpse.runs.waitFor(created.id, {
      timeoutMs: waitTimeout(options.waitTimeout as string | undefined),
      onProgress,
    });
    const output = String(options.output);
    writeFileSync(output, `${JSON.stringify(finished, null, 2)}\n`);
    io.stderr.write(`saved ${output}\n`);
    if (finished.videoUrl) {
      const video = join(dirname(output), `${basename(output, extname(output))}.webm`);
      const file = await glimpse.download(finished.videoUrl);
      writeFileSync(video, file.data);
      io.stderr.write(`saved ${video} (${file.contentType}, ${kB(file.data.length)})\n`);
    }
    if (finished.status === 'failed') {
      const step = finished.failure?.stepIndex != null ? finished.steps[finished.failure.stepIndex] : undefined;
      const why = step?.error ?? finished.finalizationError ?? finished.failure?.stage ?? 'see the run JSON';
      io.stderr.write(`glimpse: run ${finished.id} failed: ${why}\n`);
      process.exitCode = EXIT.failed;
    }
  });
  const renderFlags = Object.fromEntries(
    Object.entries(CAPTURE_FLAGS).filter(([field]) => !['format', 'cache', 'storage', 'upload'].includes(field)),
  ) as Record<string, FlagSpec>;
  const renderUrl = program
    .command('render-url')
    .description(
      'print a signed render link for <url> (docs/CONTRACT.md "Render links"); sign on a server, never ship the secret to a browser',
    )
    .argument('<url>', 'page to capture (http or https)')
    .requiredOption('--render-key <id>', 'the render key (rk_…)')
    .addOption(new Option('--secret <rks_…>', "the render key's secret").env('GLIMPSE_RENDER_SECRET'))
    .addOption(new Option('--format <format>', 'file type').choices(['png', 'jpeg', 'webp', 'pdf']).default('png'))
    .option('--expires-in <seconds>', 'the link stops working after this many seconds');
  addFieldOptions(renderUrl, renderFlags);
  renderUrl.action(async (url: string, options: Record<string, unknown>) => {
    const { baseUrl } = program.opts<{ baseUrl?: string }>();
    if (!baseUrl) throw new UsageError('no API address: set GLIMPSE_BASE_URL, e.g. https://glimpse.example.com (or pass --base-url)');
    if (!options.secret) throw new UsageError('no render key secret: set GLIMPSE_RENDER_SECRET (or pass --secret)');
    const expiresIn = options.expiresIn === undefined ? undefined : Number(options.expiresIn);
    if (expiresIn !== undefined && !(Number.isInteger(expiresIn) && expiresIn > 0))
      throw new UsageError('--expires-in: a whole number of seconds above 0');
    const link = await signRenderUrl({
      baseUrl,
      renderKeyId: String(options.renderKey),
      secret: String(options.secret),
      url,
      format: options.format as RenderLinkFormat,
      ...(expiresIn ? { expiresAt: Math.floor(Date.now() / 1000) + expiresIn } : {}),
      ...(fieldsOf(options, renderFlags) as Record<string, string | number | boolean>),
    });
    io.stdout.write(`${link}\n`);
  });
  addCrawlCommand(program, io);
  addMonitorCommands(program, io);
  addStorageCommands(program, io);
  addProfileCommands(program, io);
  return program;
}

/** Width of the crawl progress bar, characters. */
const BAR_WIDTH = 30;

/**
 * The crawl's progress on stderr: `[#####·····] 12/50 pages (1 failed, 60 found) 12.3 s`, redrawn in
 * place on a terminal, one line per change otherwise. The bar fills with the pages whose job ended
 * out of those queued so far.
 */
function crawlProgress(stderr: NodeJS.WritableStream, id: string) {
  const started = Date.now();
  const tty = (stderr as NodeJS.WriteStream).isTTY === true;
  let last = '';
  return (crawl: Crawl) => {
    const ended = crawl.pagesDone + crawl.pagesFailed;
    const total = Math.max(crawl.pagesQueued, ended, 1);
    const filled = Math.round((ended / total) * BAR_WIDTH);
    const text = `${id} ${crawl.status} [${'#'.repeat(filled)}${'·'.repeat(BAR_WIDTH - filled)}] ${ended}/${total} pages (${crawl.pagesFailed} failed, ${crawl.pagesFound} found)`;
    if (text === last) return;
    last = text;
    const line = `${text} ${((Date.now() - started) / 1000).toFixed(1)} s`;
    stderr.write(tty ? `\r${line}\x1b[K` : `${line}\n`);
  };
}

/**
 * `glimpse crawl <url> --out site.zip`: starts a crawl (docs/crawls.md), shows its progress, saves its
 * bundle (every result and `manifest.json`) and prints the crawl as JSON on stdout. Exits 3 when the
 * crawl failed or ended without a bundle.
 */
function addCrawlCommand(program: Command, io: { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream }): void {
  const crawl = program
    .command('crawl')
    .description('crawl a site from <url> (robots.txt, sitemaps, links), wait for it and save its ZIP bundle')
    .argument('<url>', 'start URL (http or https)')
    .requiredOption('--out <file>', 'where to save the ZIP of every result and manifest.json')
    .option('--max-pages <n>', 'most pages captured (the plan caps it)')
    .option('--max-depth <n>', 'links followed from the start URL (0-5, default 2)')
    .addOption(new Option('--discover <how>', 'where pages are found').choices(['sitemap', 'links', 'both']))
    .addOption(new Option('--scope <scope>', 'host: the start host; domain: its hosts below it too').choices(['host', 'domain']))
    .option('--include <glob>', 'keep only paths matching this glob (repeat for more)', (v: string, p: string[] = []) => [...p, v])
    .option('--exclude <glob>', 'leave out paths matching this glob (repeat for more)', (v: string, p: string[] = []) => [...p, v])
    .option('--ignore-robots', 'do not follow robots.txt rules')
    .option('--capture <json>', 'capture options of every page, as JSON or @file.json');
  addWaitOptions(crawl, 3_600_000);
  crawl.action(async (url: string, options: Record<string, unknown>) => {
    const glimpse = clientFrom(program.opts());
    const integer = (field: string, text: unknown) =>
      text === undefined ? undefined : parseValue(field, { kind: 'integer', description: '' }, String(text), undefined);
    const body = {
      url,
      maxPages: integer('maxPages', options.maxPages),
      maxDepth: integer('maxDepth', options.maxDepth),
      discover: options.discover,
      scope: options.scope,
      include: options.include,
      exclude: options.exclude,
      respectRobots: options.ignoreRobots ? false : undefined,
      capture:
        options.capture === undefined
          ? undefined
          : parseValue('capture', { kind: 'json', description: '' }, String(options.capture), undefined),
    } as CreateCrawlRequest;
    const created = await glimpse.crawls.create(body, { idempotencyKey: options.idempotencyKey as string | undefined });
    const onProgress = crawlProgress(io.stderr, created.id);
    onProgress(created);
    const finished = await glimpse.crawls.waitFor(created.id, {
      timeoutMs: waitTimeout(options.waitTimeout as string | undefined),
      onProgress: (state) => onProgress(state as Crawl),
    });
    io.stderr.write('\n');
    io.stdout.write(`${JSON.stringify(finished)}\n`);
    if (finished.bundleUrl) {
      const file = await glimpse.download(finished.bundleUrl);
      writeFileSync(String(options.out), file.data);
      io.stderr.write(`saved ${options.out} (${file.contentType}, ${kB(file.data.length)})\n`);
    }
    if (finished.status === 'failed' || !finished.bundleUrl) {
      io.stderr.write(
        `glimpse: crawl ${finished.id} ${finished.status}${finished.error ? `: ${finished.error}` : ''}${finished.bundleUrl ? '' : ' (no bundle)'}\n`,
      );
      process.exitCode = EXIT.failed;
    }
  });
}

/**
 * `glimpse profiles add|list|delete`: browser profiles (docs/profiles.md); each prints JSON on stdout.
 * `add` reads a state file written by Playwright's `browserContext.storageState({ path })` as it is
 * (cookies and origins outside the `--domain`s are dropped by the server), or starts an empty profile
 * for a run to record.
 */
function addProfileCommands(program: Command, io: { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream }): void {
  const print = (value: unknown): void => void io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  const profiles = program.command('profiles').description('browser profiles: saved logged-in browser states bound to their domains');
  profiles
    .command('add')
    .description('add a profile from a Playwright storage state file (use its id as --profile prf_… when capturing)')
    .argument('[state-file]', 'JSON written by storageState({ path }); none: an empty profile for a run to record')
    .requiredOption('--name <name>', 'a label')
    .requiredOption('--domain <host...>', 'allowed domain: app.example.com or *.example.com (repeat for more)')
    .action(async (stateFile: string | undefined, options: { name: string; domain: string[] }) => {
      let storageState: unknown;
      if (stateFile) {
        try {
          storageState = JSON.parse(readFileSync(stateFile, 'utf8'));
        } catch (err) {
          throw new UsageError(`${stateFile} is not a readable JSON state file: ${(err as Error).message}`);
        }
      }
      const body = { name: options.name, allowedDomains: options.domain, ...(storageState ? { storageState } : {}) };
      print(await clientFrom(program.opts()).profiles.create(body as CreateProfileRequest));
    });
  profiles
    .command('list')
    .description("the account's profiles, newest first (never their cookies or local storage)")
    .option('--limit <n>', 'page size (1-100)')
    .option('--cursor <cursor>', 'nextCursor of the previous page')
    .action(async (options: { limit?: string; cursor?: string }) =>
      print(
        await clientFrom(program.opts()).profiles.list({
          limit: options.limit ? Number(options.limit) : undefined,
          cursor: options.cursor,
        }),
      ),
    );
  profiles
    .command('delete')
    .description('delete the profile and its state')
    .argument('<id>', 'the profile (prf_…)')
    .action(async (id: string) => {
      await clientFrom(program.opts()).profiles.delete(id);
      io.stderr.write(`deleted ${id}\n`);
    });
}

/**
 * `glimpse storage list|add|test|delete`: storage destinations (docs/storage-destinations.md); each prints
 * JSON on stdout. `add` takes the secret access key from `GLIMPSE_STORAGE_SECRET_ACCESS_KEY` (or
 * `--secret-access-key`), so it stays out of the shell history. `test` exits 3 when the test failed.
 */
function addStorageCommands(program: Command, io: { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream }): void {
  const print = (value: unknown): void => void io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  const storage = program
    .command('storage')
    .description('storage destinations: your own S3-compatible buckets that captures are uploaded to');
  storage
    .command('list')
    .description("list the account's storage destinations")
    .action(async () => {
      print(await clientFrom(program.opts()).storageDestinations.list());
    });
  storage
    .command('add')
    .description('add an S3-compatible bucket (use its id as --storage \'{"destinationId":"dst_…"}\' when capturing)')
    .requiredOption('--bucket <name>', 'bucket name')
    .requiredOption('--access-key-id <id>', 'access key id')
    .addOption(new Option('--secret-access-key <secret>', 'secret access key').env('GLIMPSE_STORAGE_SECRET_ACCESS_KEY'))
    .option('--region <region>', "the bucket's region (default us-east-1)")
    .option('--endpoint <url>', 'endpoint of an S3-compatible service (MinIO, R2, …)')
    .option('--force-path-style', 'path-style addressing, as MinIO needs')
    .option('--prefix <prefix>', 'prepended to every object key')
    .option('--description <text>', 'free-text label')
    .action(async (options: Record<string, string | boolean | undefined>) => {
      if (!options.secretAccessKey)
        throw new UsageError('no secret access key: set GLIMPSE_STORAGE_SECRET_ACCESS_KEY (or pass --secret-access-key)');
      const body = {
        type: 's3' as const,
        bucket: String(options.bucket),
        accessKeyId: String(options.accessKeyId),
        secretAccessKey: String(options.secretAccessKey),
        ...(options.region ? { region: String(options.region) } : {}),
        ...(options.endpoint ? { endpoint: String(options.endpoint) } : {}),
        ...(options.forcePathStyle ? { forcePathStyle: true } : {}),
        ...(options.prefix ? { prefix: String(options.prefix) } : {}),
        ...(options.description ? { description: String(options.description) } : {}),
      };
      print(await clientFrom(program.opts()).storageDestinations.create(body));
    });
  storage
    .command('test')
    .description('write and delete a small object in the destination')
    .argument('<id>', 'the destination (dst_…)')
    .action(async (id: string) => {
      const result = await clientFrom(program.opts()).storageDestinations.test(id);
      print(result);
      if (!result.ok) process.exitCode = EXIT.failed;
    });
  storage
    .command('delete')
    .description('delete the destination (objects already uploaded stay)')
    .argument('<id>', 'the destination (dst_…)')
    .action(async (id: string) => {
      await clientFrom(program.opts()).storageDestinations.delete(id);
      io.stderr.write(`deleted ${id}\n`);
    });
}

/** Capture options a monitor does not take (docs/CONTRACT.md "Monitors"). */
const NOT_FOR_MONITORS = new Set(['cache', 'cacheTtl', 'extract', 'markdownMode', 'pdf', 'storage', 'upload']);

/** `glimpse monitors …`: one command per monitor operation, each printing the answer as JSON. */
function addMonitorCommands(program: Command, io: { stdout: NodeJS.WritableStream }): void {
  const monitors = program.command('monitors').description('scheduled captures compared with the previous image');
  const print = (value: unknown): void => {
    io.stdout.write(`${JSON.stringify(value)}\n`);
  };
  const client = () => clientFrom(program.opts());
  const monitorFlags = Object.fromEntries(Object.entries(CAPTURE_FLAGS).filter(([field]) => !NOT_FOR_MONITORS.has(field))) as Record<
    string,
    FlagSpec
  >;
  const create = monitors
    .command('create')
    .description('watch <url>: --every <seconds> or --cron <expr> [--cron-timezone <zone>]; prints the monitor')
    .argument('<url>', 'page to watch (http or https)')
    .option('--every <seconds>', 'seconds between checks')
    .option('--cron <expr>', 'five-field cron expression')
    .option('--cron-timezone <zone>', "IANA time zone of --cron (default UTC; --timezone is the browser's)")
    .option('--ignore <selector...>', 'elements masked before every capture (diff.ignoreSelectors)')
    .option('--min-change-ratio <ratio>', 'changed share of pixels that counts as a change (default 0.001)')
    .option('--description <text>', 'free-text label')
    .option('--idempotency-key <key>', 'your own Idempotency-Key for the create call');
  addFieldOptions(create, monitorFlags);
  create.action(async (url: string, options: Record<string, unknown>) => {
    if (!options.every === !options.cron) throw new UsageError('give one of --every <seconds> or --cron <expr>');
    const schedule = options.every
      ? { intervalSeconds: Number(options.every) }
      : { cron: String(options.cron), ...(options.cronTimezone ? { timezone: String(options.cronTimezone) } : {}) };
    const diff = {
      ...(options.ignore ? { ignoreSelectors: options.ignore as string[] } : {}),
      ...(options.minChangeRatio !== undefined ? { minChangeRatio: Number(options.minChangeRatio) } : {}),
    };
    const body = {
      url,
      schedule,
      ...(Object.keys(diff).length ? { diff } : {}),
      ...(options.description ? { description: String(options.description) } : {}),
      ...fieldsOf(options, monitorFlags),
    } as CreateMonitorRequest;
    print(await client().monitors.create(body, { idempotencyKey: options.idempotencyKey as string | undefined }));
  });
  monitors
    .command('list')
    .description("the account's monitors, newest first")
    .option('--limit <n>', 'page size (1-100)')
    .option('--cursor <cursor>', 'nextCursor of the previous page')
    .action(async (options: { limit?: string; cursor?: string }) =>
      print(await client().monitors.list({ limit: options.limit ? Number(options.limit) : undefined, cursor: options.cursor })),
    );
  monitors
    .command('get')
    .argument('<id>', 'monitor id (mon_…)')
    .action(async (id: string) => print(await client().monitors.get(id)));
  monitors
    .command('checks')
    .description("a monitor's checks, newest first")
    .argument('<id>', 'monitor id (mon_…)')
    .option('--limit <n>', 'page size (1-100)')
    .option('--cursor <cursor>', 'nextCursor of the previous page')
    .action(async (id: string, options: { limit?: string; cursor?: string }) =>
      print(await client().monitors.checks(id, { limit: options.limit ? Number(options.limit) : undefined, cursor: options.cursor })),
    );
  monitors
    .command('check')
    .description('check now, outside the schedule; prints { checkId }')
    .argument('<id>', 'monitor id (mon_…)')
    .action(async (id: string) => print(await client().monitors.check(id)));
  monitors
    .command('pause')
    .argument('<id>', 'monitor id (mon_…)')
    .action(async (id: string) => print(await client().monitors.update(id, { enabled: false })));
  monitors
    .command('resume')
    .argument('<id>', 'monitor id (mon_…)')
    .action(async (id: string) => print(await client().monitors.update(id, { enabled: true })));
  monitors
    .command('delete')
    .argument('<id>', 'monitor id (mon_…)')
    .action(async (id: string) => {
      await client().monitors.delete(id);
      print({ id, deleted: true });
    });
}

/** Runs the CLI with `argv` (without node and script) and resolves with the exit code; writes errors to stderr. */
export async function main(
  argv: string[],
  io: { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream } = process,
): Promise<number> {
  process.exitCode = undefined;
  try {
    await buildProgram(io).parseAsync(argv, { from: 'user' });
    return Number(process.exitCode ?? EXIT.ok);
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    if (err instanceof UsageError) {
      io.stderr.write(`glimpse: ${err.message}\n`);
      return EXIT.usage;
    }
    if (err instanceof GlimpseTimeoutError) {
      io.stderr.write(`glimpse: ${err.message}\n`);
      return EXIT.timeout;
    }
    if (err instanceof GlimpseConnectionError) {
      io.stderr.write(`glimpse: cannot reach the API: ${err.message}\n`);
      return EXIT.unreachable;
    }
    if (err instanceof GlimpseError) {
      io.stderr.write(`glimpse: ${err.code}${err.status ? ` (HTTP ${err.status})` : ''}: ${err.message}\n`);
      const fields = (err.details?.fields as { field: string; message: string }[] | undefined) ?? [];
      for (const f of fields) io.stderr.write(`  ${f.field}: ${f.message}\n`);
      return EXIT.apiError;
    }
    io.stderr.write(`glimpse: ${(err as Error)?.message ?? err}\n`);
    return EXIT.apiError;
  }
}

if (require.main === module) {
  void main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
