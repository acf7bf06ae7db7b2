import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { AuthenticatedKey } from '../auth/api-keys.service';
import { captureCacheKey, CaptureOptions, isFreshCapture, resolveCaptureOptions } from '../capture/capture-options';
import { ProfilesService } from '../profiles/profiles.service';
import { ApiError, ErrorCode } from '../common/api-error';
import { Clock } from '../common/clock';
import { newId } from '../common/ids';
import { createValidationPipe } from '../common/validation';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { WorkEndWaiter } from '../queue/work-ended';
import { CreateScreenshotDto } from '../screenshots/dto/create-screenshot.dto';
import { ScreenshotJobDto } from '../screenshots/dto/screenshot-job.dto';
import { ScreenshotsService } from '../screenshots/screenshots.service';
import { ResultFileInfo, ResultFilesService } from '../storage/result-files.service';
import { RENDER_LINK_REFUSED_OPTIONS, RenderLinkOptionsDto } from './dto/render-link.dto';
import type { VerifiedRenderLink } from './render-link.guard';
import { RecentCache } from './recent-cache';
import { hostAllowed } from '../common/host-patterns';

/** How long a render link's capture stays fresh by default, s (CONTRACT.md, "Render links"). */
export const RENDER_LINK_CACHE_TTL_S = 86_400;
/** How long a failed render is answered again without a new job, ms. */
export const RENDER_FAILURE_MEMORY_MS = 60_000;
/** How long a single-flight slot names a job not yet readable (being accepted) before another request may take it over, ms. */
const FLIGHT_ACCEPT_GRACE_MS = 30_000;
/** How long a single-flight slot is kept after it was claimed (unless its job is still open), ms: then the retention job deletes it. */
export const RENDER_FLIGHT_RETENTION_MS = 24 * 3600 * 1000;

/** How long a capture found for a link is served without looking it up again, ms (docs/render-links.md#performance). */
export const RECENT_HIT_MS = 5_000;
/** How long before a found capture's {@link RECENT_HIT_MS} end a hit looks it up again in the background, ms. */
const RECENT_HIT_REFRESH_AHEAD_MS = 1_000;
/** Largest file held in memory with a recent hit, bytes; larger ones are streamed from storage each time. */
const RECENT_HIT_MAX_FILE_BYTES = 1024 * 1024;
/** Bytes of files held in memory for recent hits, at most. */
const RECENT_HIT_MAX_BYTES = 64 * 1024 * 1024;

/** The file a render link answers with. */
export interface RenderedFile {
  file: ResultFileInfo;
  /** The file's bytes when held in memory (small files of recent hits), else null: stream it from storage. */
  data: Buffer | null;
  jobId: string;
  cache: 'HIT' | 'MISS';
  /** Seconds the capture stays fresh (`Cache-Control: max-age`). */
  freshS: number;
}

/** A link's options as validated once: the capture input, its cache key and freshness, and the host. */
interface PreparedLink {
  input: CreateScreenshotDto;
  options: CaptureOptions;
  /** The cache key without a profile's state version (a link with `profile` adds it per request: {@link RenderLinksService.cacheKeyOf}). */
  cacheKey: string;
  ttlS: number;
  host: string;
}

/** A fresh capture as found for a cache key. */
interface FoundCapture {
  /** When it was looked up (ms since the epoch). */
  foundAtMs: number;
  jobId: string;
  completedAtMs: number;
  file: ResultFileInfo;
  data: Buffer | null;
}

/**
 * Render links (CONTRACT.md, "Render links"): validates a verified link's options with the options
 * table (as upload form fields), checks its host, answers from the capture cache (nothing counted,
 * nothing written), else joins or starts the one render of that link (single flight across replicas:
 * the `render_flights` row of account and cache key names the job) and waits for it up to
 * `RENDER_WAIT_MS` without polling ({@link WorkEndWaiter}).
 *
 * The hot path (docs/render-links.md#performance): a link's validated options are remembered (they
 * depend on its parameters only), and a capture found in the cache is served for
 * {@link RECENT_HIT_MS} without a lookup, small files from memory; its freshness is still checked at
 * every request. A hit in the last {@link RECENT_HIT_REFRESH_AHEAD_MS} of that time looks the capture up
 * again in the background (one lookup at a time per cache key), so a link in steady use keeps being
 * answered by {@link recentHit} instead of sending a burst of requests to the lookup every 5 s.
 */
@Injectable()
export class RenderLinksService {
  private readonly validation = createValidationPipe();
  private readonly prepared = new RecentCache<PreparedLink>(2_000);
  /** {@link prepared}'s entries by the link object, with whether the link's host is allowed: the hit route reuses its link objects. */
  private readonly preparedOfLink = new WeakMap<VerifiedRenderLink, { prepared: PreparedLink; hostAllowed: boolean }>();
  /** Cache keys (with their account) being looked up again in the background. */
  private readonly refreshing = new Set<string>();
  private readonly recentHits = new RecentCache<FoundCapture>(2_000, RECENT_HIT_MAX_BYTES);

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly screenshots: ScreenshotsService,
    private readonly files: ResultFilesService,
    private readonly waiter: WorkEndWaiter,
    private readonly clock: Clock,
    private readonly profiles: ProfilesService,
  ) {}

  /**
   * The file of `link` for `caller` (the render key's API key). Throws 400 `VALIDATION_FAILED` (or
   * `TARGET_NOT_ALLOWED`), 403 `HOST_NOT_ALLOWED`, 422 `CAPTURE_FAILED` (also for 60 s after a failure,
   * without a new job), 429 `PLAN_QUOTA_EXCEEDED` on a miss over quota, 503 `RENDER_PENDING` (with
   * `Cache-Control: no-store` and a `Retry-After` from the backlog ahead of its job and the measured
   * throughput, {@link ScreenshotsService.retryAfterS}) when the render outlasts `RENDER_WAIT_MS`.
   */
  async render(caller: AuthenticatedKey, link: VerifiedRenderLink): Promise<RenderedFile> {
    const prepared = await this.prepare(link);
    const { input, ttlS, host } = prepared;
    if (!hostAllowed(host, link.allowedHosts))
      throw new ApiError(ErrorCode.HOST_NOT_ALLOWED, 403, `This render key may not capture ${host}`);
    const cacheKey = await this.cacheKeyOf(caller, prepared);
    const hit = await this.cached(caller.accountId, cacheKey, ttlS);
    if (hit) return { ...hit, cache: 'HIT' };

    const jobId = await this.flight(caller, cacheKey, ttlS, input);
    const ended = await this.waiter.waitForEnd(jobId, this.config.renderWaitMs, async () => {
      const job = await this.job(caller, jobId);
      return job && (job.status === 'done' || job.status === 'failed') ? job : null;
    });
    if (!ended) {
      throw new ApiError(ErrorCode.RENDER_PENDING, 503, 'The render is still running; retry shortly', undefined, {
        'Retry-After': String(await this.screenshots.retryAfterS(jobId)),
        'Cache-Control': 'no-store',
      });
    }
    if (ended.status === 'failed') throw captureFailed(ended);
    const done = await this.cached(caller.accountId, cacheKey, ttlS);
    if (!done)
      throw new ApiError(ErrorCode.CAPTURE_FAILED, 422, 'The capture finished but its file is no longer available; retry', undefined, {
        'Cache-Control': 'no-store',
      });
    return { ...done, jobId: ended.id, cache: 'MISS' };
  }

  /** The link's capture input, cache key and host, validated once per distinct link (see {@link options}). */
  private async prepare(link: VerifiedRenderLink): Promise<PreparedLink> {
    const memoKey = preparedKeyOf(link);
    const now = Date.now();
    const known = this.prepared.get(memoKey, now);
    if (known) return known;
    const dto = await this.options(link);
    const input = { ...dto, format: link.format, cache: true, cacheTtl: dto.cacheTtl ?? RENDER_LINK_CACHE_TTL_S } as CreateScreenshotDto;
    const options = resolveCaptureOptions(input);
    const prepared = {
      input,
      options,
      cacheKey: captureCacheKey(dto.url, options),
      ttlS: options.cacheTtlS,
      host: new URL(dto.url).hostname.toLowerCase(),
    };
    // Pure in the link's parameters: kept as long as it stays among the recent ones.
    this.prepared.set(memoKey, prepared, now + 3_600_000);
    return prepared;
  }

  /**
   * The link's cache key for `caller`: as prepared, or with a `profile` (CONTRACT.md, "Browser
   * profiles") its current state version added, after checking that the profile is the account's
   * (404 `NOT_FOUND`) and covers the link's host (400 `PROFILE_DOMAIN_NOT_ALLOWED`).
   */
  private async cacheKeyOf(caller: AuthenticatedKey, prepared: PreparedLink): Promise<string> {
    const { input, options } = prepared;
    if (!input.profile) return prepared.cacheKey;
    const [version] = await this.profiles.assertUsable(caller.accountId, [{ profile: input.profile, url: input.url, prefix: '' }]);
    return captureCacheKey(input.url, options, version);
  }

  /**
   * The link's options validated by the options table (400 `VALIDATION_FAILED` naming the parameter):
   * a parameter given twice, or an option links refuse ({@link RENDER_LINK_REFUSED_OPTIONS}: `format`,
   * `cache`, `extract`, `storage`, `upload`), is refused before the others are read.
   */
  private async options(link: VerifiedRenderLink): Promise<RenderLinkOptionsDto> {
    const plain: Record<string, string> = {};
    for (const [name, value] of link.params) {
      if (Object.prototype.hasOwnProperty.call(plain, name))
        throw ApiError.validation([{ field: name, message: `${name} must be given once` }]);
      const refused = Object.prototype.hasOwnProperty.call(RENDER_LINK_REFUSED_OPTIONS, name)
        ? RENDER_LINK_REFUSED_OPTIONS[name as keyof typeof RENDER_LINK_REFUSED_OPTIONS]
        : undefined;
      if (refused) throw ApiError.validation([{ field: name, message: `${name} ${refused}` }]);
      plain[name] = value;
    }
    return (await this.validation.transform(plain, { type: 'query', metatype: RenderLinkOptionsDto })) as RenderLinkOptionsDto;
  }

  /**
   * The link's file when a capture of it was found in the last {@link RECENT_HIT_MS} and is still
   * fresh at `nowMs` (ms), without any lookup and synchronously (`X-Glimpse-Cache: HIT`); else null,
   * also when the link's options have not been validated yet in the last hour or are invalid, its host
   * is not allowed or it names a `profile` (whose use is checked at every request,
   * {@link cacheKeyOf}): {@link render} answers those. For the hit route
   * (docs/render-links.md#performance).
   */
  recentHit(caller: AuthenticatedKey, link: VerifiedRenderLink, nowMs: number): RenderedFile | null {
    let known = this.preparedOfLink.get(link);
    if (!known) {
      const prepared = this.prepared.get(preparedKeyOf(link), nowMs);
      if (!prepared) return null;
      known = { prepared, hostAllowed: hostAllowed(prepared.host, link.allowedHosts) };
      this.preparedOfLink.set(link, known);
    }
    const { prepared, hostAllowed: allowed } = known;
    if (prepared.input.profile || !allowed) return null;
    const found = this.recent(caller.accountId, prepared.cacheKey, prepared.ttlS, nowMs);
    if (!found) return null;
    if (nowMs - found.foundAtMs >= RECENT_HIT_MS - RECENT_HIT_REFRESH_AHEAD_MS)
      this.refresh(caller.accountId, prepared.cacheKey, prepared.ttlS);
    return { file: found.file, data: found.data, jobId: found.jobId, cache: 'HIT', freshS: freshSOf(found, prepared.ttlS, nowMs) };
  }

  /**
   * The fresh cached capture of the cache key with its servable file (its bytes when small), or null:
   * one found in the last {@link RECENT_HIT_MS} when still fresh for `ttlS` and its file unexpired,
   * else looked up in PostgreSQL and storage.
   */
  private async cached(accountId: string, cacheKey: string, ttlS: number): Promise<Omit<RenderedFile, 'cache'> | null> {
    const nowMs = this.clock.now().getTime();
    const found = this.recent(accountId, cacheKey, ttlS, nowMs) ?? (await this.lookUp(accountId, cacheKey, ttlS, nowMs));
    return found && servable(found, ttlS, nowMs);
  }

  /** Looks the cache key's capture up again in the background, unless that is under way; a failure leaves the found one to expire. */
  private refresh(accountId: string, cacheKey: string, ttlS: number): void {
    const key = `${accountId}\n${cacheKey}`;
    if (this.refreshing.has(key)) return;
    this.refreshing.add(key);
    this.lookUp(accountId, cacheKey, ttlS, this.clock.now().getTime())
      .catch(() => null)
      .finally(() => this.refreshing.delete(key));
  }

  /**
   * The fresh capture of the cache key looked up at `nowMs` (ms) in PostgreSQL and storage, and
   * remembered for {@link RECENT_HIT_MS} (at most until its file expires); none found: forgets the one
   * remembered.
   */
  private async lookUp(accountId: string, cacheKey: string, ttlS: number, nowMs: number): Promise<FoundCapture | null> {
    const key = `${accountId}\n${cacheKey}`;
    const found = await this.find(accountId, cacheKey, ttlS, nowMs);
    if (!found) {
      this.recentHits.delete(key);
      return null;
    }
    this.recentHits.set(key, found, Math.min(nowMs + RECENT_HIT_MS, found.file.expiresAt.getTime()), found.data?.length ?? 0);
    return found;
  }

  /** The capture of the cache key found in the last {@link RECENT_HIT_MS} when still fresh for `ttlS` at `nowMs` (ms) and its file unexpired. */
  private recent(accountId: string, cacheKey: string, ttlS: number, nowMs: number): FoundCapture | undefined {
    const found = this.recentHits.get(`${accountId}\n${cacheKey}`, nowMs);
    return found && isFreshCapture(found.completedAtMs, ttlS, nowMs) && found.file.expiresAt.getTime() > nowMs ? found : undefined;
  }

  /** The fresh capture of the cache key in PostgreSQL with its file described (and read when small), or null. */
  private async find(accountId: string, cacheKey: string, ttlS: number, nowMs: number): Promise<FoundCapture | null> {
    const capture = await this.screenshots.freshCapture(accountId, cacheKey, ttlS);
    if (!capture) return null;
    const file = await this.files.describe(capture.artifacts.image);
    if (!file) return null;
    const data =
      file.size <= RECENT_HIT_MAX_FILE_BYTES ? ((await this.files.open(file.name, RECENT_HIT_MAX_FILE_BYTES))?.data ?? null) : null;
    return { foundAtMs: nowMs, jobId: capture.id, completedAtMs: capture.completedAt.getTime(), file, data };
  }

  /**
   * Deletes at most `limit` single-flight slots claimed more than {@link RENDER_FLIGHT_RETENTION_MS}
   * ago whose job is no longer pending or processing (past that a slot only names an ended render,
   * which the capture cache or a new render answers); returns how many. For the retention job.
   */
  async purgeOldFlights(limit: number): Promise<number> {
    const cutoff = new Date(this.clock.now().getTime() - RENDER_FLIGHT_RETENTION_MS);
    const [, affected]: [unknown, number] = await this.db.query(
      `DELETE FROM render_flights WHERE ctid IN (
         SELECT f.ctid FROM render_flights f
          WHERE f.created_at < $1
            AND NOT EXISTS (SELECT 1 FROM screenshot_jobs j WHERE j.id = f.job_id AND j.status IN ('pending', 'processing'))
          LIMIT $2)`,
      [cutoff, limit],
    );
    return affected;
  }

  /** The caller's job, or null when it does not exist (yet). */
  private async job(caller: AuthenticatedKey, id: string): Promise<ScreenshotJobDto | null> {
    try {
      return await this.screenshots.get(caller, id);
    } catch (err) {
      if (err instanceof ApiError && err.code === ErrorCode.NOT_FOUND) return null;
      throw err;
    }
  }

  /**
   * The id of the one render of (account, cache key): the running one named by its `render_flights`
   * row (joined: no new job, no quota), or a new job started here after claiming the row (inserted, or
   * taken over with a compare-and-set when its job ended). Throws 422 `CAPTURE_FAILED` when the row's
   * job failed less than 60 s ago, and the errors of job acceptance (the claim is then released).
   */
  private async flight(caller: AuthenticatedKey, cacheKey: string, ttlS: number, dto: CreateScreenshotDto): Promise<string> {
    for (let round = 0; ; round++) {
      const now = this.clock.now();
      const [row]: { job_id: string; created_at: Date }[] = await this.db.query(
        'SELECT job_id, created_at FROM render_flights WHERE account_id = $1 AND cache_key = $2',
        [caller.accountId, cacheKey],
      );
      const jobId = newId('screenshot');
      let claimed: unknown[];
      if (row) {
        const job = await this.job(caller, row.job_id);
        if (!job) {
          if (now.getTime() - new Date(row.created_at).getTime() < FLIGHT_ACCEPT_GRACE_MS) return row.job_id;
        } else if (job.status === 'pending' || job.status === 'processing') {
          return row.job_id;
        } else if (job.status === 'failed' && job.completedAt && now.getTime() - Date.parse(job.completedAt) < RENDER_FAILURE_MEMORY_MS) {
          throw captureFailed(job);
        } else if (job.status === 'done' && job.completedAt && now.getTime() - Date.parse(job.completedAt) < ttlS * 1000) {
          return row.job_id;
        }
        claimed = await this.db.query(
          'UPDATE render_flights SET job_id = $4, created_at = $5 WHERE account_id = $1 AND cache_key = $2 AND job_id = $3 RETURNING 1',
          [caller.accountId, cacheKey, row.job_id, jobId, now],
        );
      } else {
        claimed = await this.db.query(
          'INSERT INTO render_flights (account_id, cache_key, job_id, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING 1',
          [caller.accountId, cacheKey, jobId, now],
        );
      }
      if (claimed.length) return this.start(caller, cacheKey, dto, jobId);
      if (round >= 10) throw new Error('render_flights: no stable slot after 10 rounds');
    }
  }

  /** Accepts the job `jobId` of a claimed flight; on failure releases the claim and rethrows. */
  private async start(caller: AuthenticatedKey, cacheKey: string, dto: CreateScreenshotDto, jobId: string): Promise<string> {
    try {
      await this.screenshots.create(caller, dto, { jobId, queueClass: 'interactive' });
      return jobId;
    } catch (err) {
      await this.db.query('DELETE FROM render_flights WHERE account_id = $1 AND cache_key = $2 AND job_id = $3', [
        caller.accountId,
        cacheKey,
        jobId,
      ]);
      throw err;
    }
  }
}

/** What a found capture answers at `nowMs` (ms): its file, and the seconds it stays fresh for `ttlS`. */
function servable(found: FoundCapture, ttlS: number, nowMs: number): Omit<RenderedFile, 'cache'> {
  return { file: found.file, data: found.data, jobId: found.jobId, freshS: freshSOf(found, ttlS, nowMs) };
}

/** Seconds `found` stays fresh for `ttlS` after `nowMs` (ms): `Cache-Control: max-age`. */
function freshSOf(found: FoundCapture, ttlS: number, nowMs: number): number {
  return Math.max(0, Math.floor(ttlS - (nowMs - found.completedAtMs) / 1000));
}

/** The key of a link's validated options in {@link RenderLinksService}'s memo: they depend on its format and parameters only. */
function preparedKeyOf(link: VerifiedRenderLink): string {
  return `${link.format}\n${JSON.stringify(link.params)}`;
}

/** 422 `CAPTURE_FAILED` with the job's customer-safe error. */
function captureFailed(job: ScreenshotJobDto): ApiError {
  return new ApiError(ErrorCode.CAPTURE_FAILED, 422, job.error ?? 'The capture failed', undefined, {
    'Cache-Control': 'no-store',
    'X-Glimpse-Job-Id': job.id,
  });
}
