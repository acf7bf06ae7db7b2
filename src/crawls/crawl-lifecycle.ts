import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, IsNull, LessThan, Not, Repository } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { Clock } from '../common/clock';
import { EventsService } from '../events/events.service';
import { PublishedWithin, WorkLifecycle } from '../queue/work-lifecycle';
import { ResultFilesService } from '../storage/result-files.service';
import { Crawl, CrawlCounts, CrawlStatus, CrawlStoppedReason } from './crawl.entity';

/** How a crawl ends: the fields written with its final status. */
export interface CrawlEnding {
  status: 'completed' | 'failed' | 'canceled';
  stoppedReason: CrawlStoppedReason;
  bundleFile: string | null;
  finalCounts: CrawlCounts;
  error: string | null;
}

/** What {@link CrawlLifecycle.cancel} did. */
export type CrawlCancelOutcome = { outcome: 'ended' | 'requested' | 'already-ended'; crawl: Crawl };

/** States a crawl can still end from. */
const OPEN_CRAWL_STATUSES: CrawlStatus[] = ['pending', 'running'];

/**
 * The one owner of a crawl's state (CONTRACT.md, "Crawls": `pending` → `running` → `completed` |
 * `failed` | `canceled`, never back), on the {@link WorkLifecycle} pattern: each transition one
 * `UPDATE … RETURNING` guarded by the current state, the ending's `crawl.completed` / `crawl.failed`
 * event stored in the same transaction. The crawl processor wraps every call in `retryStateWrite`.
 */
@Injectable()
export class CrawlLifecycle extends WorkLifecycle<Crawl> {
  constructor(
    @InjectRepository(Crawl) crawls: Repository<Crawl>,
    private readonly files: ResultFilesService,
    private readonly events: EventsService,
    private readonly clock: Clock,
  ) {
    super(crawls);
  }

  /**
   * Moves a `pending` crawl to `running` and returns it; a crawl found `running` is returned as it is:
   * its previous driver stopped (process stopped or killed) and this one resumes it from what
   * PostgreSQL holds (its pages, their jobs). Null when the crawl is unknown or ended.
   */
  async claim(crawlId: string): Promise<Crawl | null> {
    const claimed = await this.transition(crawlId, ['pending'], { status: 'running', startedAt: this.clock.now() });
    return claimed ?? this.rows.findOneBy({ id: crawlId, status: 'running' });
  }

  /** Records that the crawl's robots.txt and sitemaps were read and its first pages stored, in `manager`'s transaction. */
  async markSeeded(manager: EntityManager, crawlId: string): Promise<void> {
    await manager.update(Crawl, { id: crawlId }, { seededAt: this.clock.now() });
  }

  /** The crawl as it is now (null when unknown). */
  reload(crawlId: string): Promise<Crawl | null> {
    return this.rows.findOneBy({ id: crawlId });
  }

  /**
   * Ends a `running` crawl (or a `pending` one, for a cancel before any worker took it) with
   * `ending`, storing `crawl.completed` or `crawl.failed` in the same transaction (a canceled crawl
   * has no event). Returns the ended crawl, or null when it had already ended.
   */
  finish(crawlId: string, ending: CrawlEnding, from: CrawlStatus[] = OPEN_CRAWL_STATUSES): Promise<Crawl | null> {
    const changes = { ...ending, completedAt: this.clock.now() } as QueryDeepPartialEntity<Crawl>;
    return this.end(crawlId, from, changes, (manager, crawl) => this.publishEnd(manager, crawl));
  }

  /**
   * Cancels a crawl (CONTRACT.md, "Crawls": `POST /v1/crawls/:id/cancel`): a `pending` one ends
   * `canceled` at once (it has no page yet); a `running` one gets `cancelRequestedAt`, and its driver
   * fails the jobs not yet started, waits for the others, stores the bundle and ends it `canceled`; an
   * ended one is left as it is.
   */
  async cancel(crawl: Pick<Crawl, 'id' | 'status'>): Promise<CrawlCancelOutcome> {
    if (crawl.status === 'pending') {
      const ended = await this.finish(
        crawl.id,
        {
          status: 'canceled',
          stoppedReason: 'canceled',
          bundleFile: null,
          finalCounts: { pagesFound: 0, pagesQueued: 0, pagesDone: 0, pagesFailed: 0 },
          error: null,
        },
        ['pending'],
      );
      if (ended) return { outcome: 'ended', crawl: ended };
    }
    const requested = await this.transition(crawl.id, ['running'], { cancelRequestedAt: this.clock.now() });
    if (requested) return { outcome: 'requested', crawl: requested };
    const now = await this.rows.findOneByOrFail({ id: crawl.id });
    return { outcome: OPEN_CRAWL_STATUSES.includes(now.status) ? 'requested' : 'already-ended', crawl: now };
  }

  /**
   * Deletes the bundles of crawls that ended before `before` (past `RESULT_TTL_DAYS`), at most `limit`
   * per call, and marks them (`bundleDeletedAt`); returns how many were deleted.
   */
  async purgeExpiredBundles(before: Date, limit: number): Promise<number> {
    const expired = await this.rows.find({
      select: { id: true, bundleFile: true },
      where: { bundleFile: Not(IsNull()), bundleDeletedAt: IsNull(), completedAt: LessThan(before) },
      take: limit,
    });
    for (const crawl of expired) {
      await this.files.deleteFile(crawl.bundleFile!);
      await this.rows.update({ id: crawl.id }, { bundleDeletedAt: this.clock.now() });
    }
    return expired.length;
  }

  /** Stores `crawl.completed` / `crawl.failed` (CONTRACT.md, "Crawls") in `manager`'s transaction; nothing for `canceled`. */
  private async publishEnd(manager: EntityManager, crawl: Crawl): Promise<PublishedWithin> {
    if (crawl.status !== 'completed' && crawl.status !== 'failed') return { afterCommit: async () => undefined };
    const counts = crawl.finalCounts ?? { pagesFound: 0, pagesQueued: 0, pagesDone: 0, pagesFailed: 0 };
    return this.events.publishWithin(manager, crawl.accountId, crawl.status === 'completed' ? 'crawl.completed' : 'crawl.failed', {
      crawlId: crawl.id,
      url: crawl.url,
      status: crawl.status,
      ...counts,
      stoppedReason: crawl.stoppedReason,
      bundleUrl: crawl.bundleFile ? this.files.publicUrl(crawl.bundleFile) : null,
      error: crawl.error,
    });
  }
}
