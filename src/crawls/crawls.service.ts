import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { DataSource, Repository } from 'typeorm';
import { requireAccountOwned } from '../accounts/find-account-owned';
import { planLimit } from '../accounts/plan';
import { assertBelowPlanLimit, planLimitReached } from '../accounts/plan-limits';
import type { AuthenticatedKey } from '../auth/api-keys.service';
import { captureOptionConflicts } from '../capture/capture-options';
import { ApiError, FieldError } from '../common/api-error';
import { Clock } from '../common/clock';
import { newId } from '../common/ids';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { SsrfGuard } from '../egress/ssrf-guard';
import { ProfilesService } from '../profiles/profiles.service';
import { DurableQueueService } from '../queue/durable-queue.service';
import { ScreenshotsService } from '../screenshots/screenshots.service';
import { ResultFilesService } from '../storage/result-files.service';
import { CrawlLifecycle } from './crawl-lifecycle';
import { CrawlPages, CrawlProgress } from './crawl-pages';
import { normaliseUrl } from './crawl-urls';
import { CrawlWork } from './crawl-work';
import { Crawl } from './crawl.entity';
import { CRAWL_LIMITS, CreateCrawlDto } from './dto/create-crawl.dto';
import { CrawlDto, CrawlListDto, CrawlPageListDto, ListCrawlsQueryDto } from './dto/crawl.dto';
import { CursorPageQueryDto } from '../common/cursor-page-query.dto';
import { DEFAULT_PAGE_SIZE, newestFirstPage } from '../common/cursor';

/** The account's crawls not ended (the plan's "crawls running at once"); `$1` the account id. */
const OPEN_CRAWLS_SQL = `SELECT count(*)::int AS n FROM crawls WHERE account_id = $1 AND status IN ('pending', 'running')`;

/** Capture options a crawl's pages cannot take: one upload URL or delivery per page is not offered. */
const REFUSED_CAPTURE_OPTIONS = ['upload', 'storage'] as const;

/**
 * The API side of crawls (CONTRACT.md, "Crawls"): accepts them (validation, SSRF check of the start
 * URL, plan caps on `maxPages` and on crawls running at once, the `pending` row, its queue job),
 * answers polls, lists and page lists, and cancels; entities are mapped to DTOs here. The crawl is
 * driven by `CrawlProcessor`; its states are written by {@link CrawlLifecycle}.
 */
@Injectable()
export class CrawlsService {
  constructor(
    @InjectRepository(Crawl) private readonly crawls: Repository<Crawl>,
    @InjectDataSource() private readonly db: DataSource,
    private readonly lifecycle: CrawlLifecycle,
    private readonly pages: CrawlPages,
    private readonly crawlWork: CrawlWork,
    private readonly queues: DurableQueueService,
    private readonly ssrfGuard: SsrfGuard,
    private readonly profiles: ProfilesService,
    private readonly screenshots: ScreenshotsService,
    private readonly files: ResultFilesService,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Accepts a crawl: 400 `VALIDATION_FAILED` for capture options that conflict (naming
   * `capture.<field>`) or that a crawl cannot take (`capture.upload`, `capture.storage`); 400
   * `TARGET_NOT_ALLOWED` when the SSRF guard refuses the start URL; 404 `NOT_FOUND` / 400
   * `PROFILE_DOMAIN_NOT_ALLOWED` for a `capture.profile` not the account's or not allowed on the start
   * URL's host ({@link ProfilesService.assertUsable}); 403 `PLAN_LIMIT_REACHED` when
   * `maxPages` is above the plan's cap (`resource: "crawl_pages"`) or the account already has its
   * plan's crawls running at once (`running_crawls`, counted under the account row's lock). Nothing
   * is counted against the quota here: each page is, when its job is created. The crawl is queued
   * after the commit (a crawl Redis could not take stays `pending` for the reconciler).
   */
  async create(caller: AuthenticatedKey, dto: CreateCrawlDto): Promise<CrawlDto> {
    const capture = { ...(dto.capture ?? {}) };
    const problems: FieldError[] = [
      ...REFUSED_CAPTURE_OPTIONS.filter((name) => capture[name] != null).map((name) => ({
        field: `capture.${name}`,
        message: 'is not available for crawls',
      })),
      ...captureOptionConflicts(capture, this.config, 'capture.'),
    ];
    if (problems.length) throw ApiError.validation(problems);
    await this.ssrfGuard.assertAllowed(dto.url);
    await this.profiles.assertUsable(caller.accountId, [{ profile: capture.profile, url: dto.url, prefix: 'capture.' }]);
    const pageCap = planLimit(caller.plan, 'crawl_pages');
    if (dto.maxPages !== undefined && dto.maxPages > pageCap) throw planLimitReached('crawl_pages', pageCap, caller.plan);
    const crawl = this.crawls.create({
      id: newId('crawl'),
      accountId: caller.accountId,
      apiKeyId: caller.apiKeyId,
      status: 'pending',
      url: normaliseUrl(dto.url) ?? dto.url,
      discover: dto.discover ?? 'both',
      maxPages: dto.maxPages ?? Math.min(CRAWL_LIMITS.maxPages.default, pageCap),
      maxDepth: dto.maxDepth ?? CRAWL_LIMITS.maxDepth.default,
      include: dto.include ?? [],
      exclude: dto.exclude ?? [],
      scope: dto.scope ?? 'host',
      respectRobots: dto.respectRobots ?? true,
      capture,
      seededAt: null,
      stoppedReason: null,
      bundleFile: null,
      bundleDeletedAt: null,
      error: null,
      finalCounts: null,
      cancelRequestedAt: null,
      createdAt: this.clock.now(),
      startedAt: null,
      completedAt: null,
    });
    await this.db.transaction(async (manager) => {
      await assertBelowPlanLimit(manager, caller.accountId, 'running_crawls', OPEN_CRAWLS_SQL);
      await manager.insert(Crawl, crawl);
    });
    await this.queues.enqueue(this.crawlWork.work, crawl.id);
    return this.toDto(crawl, null);
  }

  /** The caller's crawl. Throws 404 `NOT_FOUND` for a malformed id, an unknown one or another account's. */
  async get(caller: Pick<AuthenticatedKey, 'accountId'>, id: string): Promise<CrawlDto> {
    const crawl = await this.findOwn(caller, id);
    return this.toDto(crawl, (await this.pages.progress([crawl.id])).get(crawl.id) ?? null);
  }

  /**
   * The caller's crawls, newest first, `limit` (1–100, default 20) per page, optionally of one status.
   * Throws 400 `VALIDATION_FAILED` naming `cursor` when it is not one this endpoint issued.
   */
  async list(caller: Pick<AuthenticatedKey, 'accountId'>, query: ListCrawlsQueryDto): Promise<CrawlListDto> {
    const qb = this.crawls.createQueryBuilder('c').where('c.account_id = :accountId', { accountId: caller.accountId });
    if (query.status) qb.andWhere('c.status = :status', { status: query.status });
    const { rows, nextCursor } = await newestFirstPage(qb, query, 'crawl');
    const progress = await this.pages.progress(rows.filter((c) => !c.finalCounts).map((c) => c.id));
    return { data: rows.map((crawl) => this.toDto(crawl, progress.get(crawl.id) ?? null)), nextCursor };
  }

  /**
   * The pages of the caller's crawl in discovery order, `limit` per page (CONTRACT.md, "Crawls"):
   * each with its job's status, result URL and title. Throws 404 as {@link get}, 400 for a cursor not issued here.
   */
  async listPages(caller: Pick<AuthenticatedKey, 'accountId'>, id: string, query: CursorPageQueryDto): Promise<CrawlPageListDto> {
    const crawl = await this.findOwn(caller, id);
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const after = query.cursor === undefined ? 0 : pageCursorOf(query.cursor);
    const listed = await this.pages.list(crawl.id, after, limit + 1);
    const page = listed.slice(0, limit);
    const results = await this.screenshots.crawlPageResults(page.flatMap((p) => (p.jobId ? [p.jobId] : [])));
    return {
      data: page.map((p) => {
        const result = p.jobId ? results.get(p.jobId) : undefined;
        return {
          url: p.url,
          depth: p.depth,
          jobId: p.jobId,
          status: result?.status ?? 'skipped',
          resultUrl: result?.resultFile ? this.files.publicUrl(result.resultFile) : null,
          title: result?.title ?? null,
        };
      }),
      nextCursor: listed.length > limit ? Buffer.from(`p|${page[page.length - 1].seq}`).toString('base64url') : null,
    };
  }

  /**
   * Cancels the caller's crawl (CONTRACT.md, "Crawls"): a `pending` one ends `canceled` at once; a
   * `running` one is asked to stop, and its driver fails its jobs not yet started (not counted back),
   * waits for the others, stores the bundle and ends it `canceled`; an ended one is left as it is
   * (CONTRACT.md names no error for it: a repeated cancel answers the same). Returns the crawl as it
   * is now. Throws 404 as {@link get}.
   */
  async cancel(caller: Pick<AuthenticatedKey, 'accountId'>, id: string): Promise<CrawlDto> {
    const { crawl } = await this.lifecycle.cancel(await this.findOwn(caller, id));
    return this.toDto(crawl, (await this.pages.progress([crawl.id])).get(crawl.id) ?? null);
  }

  private findOwn(caller: Pick<AuthenticatedKey, 'accountId'>, id: string): Promise<Crawl> {
    return requireAccountOwned(this.crawls, 'crawl', id, caller.accountId, 'Crawl');
  }

  /** Maps the entity to its public shape: the counts as ended, else `progress` (its pages now). */
  toDto(crawl: Crawl, progress: CrawlProgress | null): CrawlDto {
    const counts = crawl.finalCounts ?? progress ?? { pagesFound: 0, pagesQueued: 0, pagesDone: 0, pagesFailed: 0 };
    return {
      id: crawl.id,
      status: crawl.status,
      url: crawl.url,
      pagesFound: counts.pagesFound,
      pagesQueued: counts.pagesQueued,
      pagesDone: counts.pagesDone,
      pagesFailed: counts.pagesFailed,
      stoppedReason: crawl.stoppedReason,
      bundleUrl: crawl.bundleFile ? this.files.publicUrl(crawl.bundleFile) : null,
      error: crawl.error,
      createdAt: crawl.createdAt.toISOString(),
      completedAt: crawl.completedAt?.toISOString() ?? null,
    };
  }
}

/** The last page (`seq`) a page list cursor names; throws 400 `VALIDATION_FAILED` naming `cursor` when it is not one issued here. */
function pageCursorOf(cursor: string): number {
  const match = /^p\|(\d{1,18})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match) throw ApiError.validation([{ field: 'cursor', message: 'must be a nextCursor returned by this endpoint' }]);
  return Number(match[1]);
}
