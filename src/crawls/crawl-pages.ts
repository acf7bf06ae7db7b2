import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { sqlRows } from '../sql/sql';
import type { CrawlCounts } from './crawl.entity';

/** A crawl's counts with what its driver needs to know whether it is done. */
export interface CrawlProgress extends CrawlCounts {
  /** Pages found that have no job yet. */
  unqueued: number;
  /** Pages whose job has not ended. */
  open: number;
  /** Pages whose job ended and whose links were not read yet. */
  unharvested: number;
}

/** A page found but not queued yet. */
export interface UnqueuedPage {
  seq: number;
  url: string;
  depth: number;
}

/** A page as `GET /v1/crawls/:id/pages` lists it, before its job's results are read. */
export interface ListedPage {
  seq: number;
  url: string;
  depth: number;
  jobId: string | null;
}

/**
 * {@link CrawlPages.progress}: a crawl's pages and their jobs' states. It reads only the jobs' `status`
 * column (CONTRACT.md, "Crawls": counts).
 */
const PROGRESS_SQL = `
  SELECT p.crawl_id AS crawl_id,
         count(*)::int AS found,
         count(p.job_id)::int AS queued,
         count(*) FILTER (WHERE j.status = 'done')::int AS done,
         count(*) FILTER (WHERE j.status = 'failed')::int AS failed,
         count(*) FILTER (WHERE p.job_id IS NULL)::int AS unqueued,
         count(*) FILTER (WHERE j.status IN ('pending', 'processing'))::int AS open,
         count(*) FILTER (WHERE j.status IN ('done', 'failed') AND NOT p.harvested)::int AS unharvested
    FROM crawl_pages p LEFT JOIN screenshot_jobs j ON j.id = p.job_id
   WHERE p.crawl_id = ANY($1)
   GROUP BY p.crawl_id`;

/**
 * The pages of crawls (`crawl_pages`, CONTRACT.md "Crawls"): one row per normalised URL of a crawl
 * (UNIQUE (crawl_id, normalised_url): a page is stored once whatever process finds it, in whatever
 * order), its depth, its job once queued, and whether its links were read. Plain SQL on the one table
 * (and the jobs' `status` for counts).
 */
@Injectable()
export class CrawlPages {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * Stores the pages `pages` of the crawl that are not stored yet (a page already found keeps its first
   * depth), in `manager`'s transaction when given; returns how many were new.
   */
  async add(crawlId: string, pages: { url: string; depth: number }[], manager?: EntityManager): Promise<number> {
    if (!pages.length) return 0;
    const rows: unknown[] = await (manager ?? this.db.manager).query(
      `INSERT INTO crawl_pages (crawl_id, normalised_url, depth)
       SELECT $1, url, depth FROM unnest($2::text[], $3::int[]) AS t(url, depth)
       ON CONFLICT (crawl_id, normalised_url) DO NOTHING
       RETURNING seq`,
      [crawlId, pages.map((p) => p.url), pages.map((p) => p.depth)],
    );
    return rows.length;
  }

  /** The counts of each crawl of `crawlIds` (a crawl without pages is absent: all zero). */
  async progress(crawlIds: string[]): Promise<Map<string, CrawlProgress>> {
    const rows = await sqlRows<Record<string, number | string>>(this.db, PROGRESS_SQL, [crawlIds]);
    return new Map(
      rows.map((r) => [
        String(r.crawl_id),
        {
          pagesFound: Number(r.found),
          pagesQueued: Number(r.queued),
          pagesDone: Number(r.done),
          pagesFailed: Number(r.failed),
          unqueued: Number(r.unqueued),
          open: Number(r.open),
          unharvested: Number(r.unharvested),
        },
      ]),
    );
  }

  /** Up to `limit` pages without a job, shallowest first, then in discovery order. */
  async unqueued(crawlId: string, limit: number): Promise<UnqueuedPage[]> {
    const rows = await sqlRows<{ seq: string; url: string; depth: number }>(
      this.db,
      `SELECT seq, normalised_url AS url, depth FROM crawl_pages WHERE crawl_id = $1 AND job_id IS NULL ORDER BY depth, seq LIMIT $2`,
      [crawlId, limit],
    );
    return rows.map((r) => ({ seq: Number(r.seq), url: r.url, depth: r.depth }));
  }

  /** Gives the page `seq` its job in `manager`'s transaction; false when it already had one (another driver queued it). */
  async assignJob(manager: EntityManager, seq: number, jobId: string): Promise<boolean> {
    const [rows] = (await manager.query(`UPDATE crawl_pages SET job_id = $2 WHERE seq = $1 AND job_id IS NULL RETURNING seq`, [
      seq,
      jobId,
    ])) as [unknown[], number];
    return rows.length === 1;
  }

  /** Up to `limit` pages whose job ended and whose links were not read yet, shallowest first. */
  async unharvested(crawlId: string, limit: number): Promise<{ seq: number; jobId: string; depth: number; url: string }[]> {
    const rows = await sqlRows<{ seq: string; job_id: string; depth: number; url: string }>(
      this.db,
      `SELECT p.seq, p.job_id, p.depth, p.normalised_url AS url FROM crawl_pages p JOIN screenshot_jobs j ON j.id = p.job_id
        WHERE p.crawl_id = $1 AND NOT p.harvested AND j.status IN ('done', 'failed') ORDER BY p.depth, p.seq LIMIT $2`,
      [crawlId, limit],
    );
    return rows.map((r) => ({ seq: Number(r.seq), jobId: r.job_id, depth: r.depth, url: r.url }));
  }

  /** Marks the links of the pages `seqs` as read, in `manager`'s transaction (with the pages they added). */
  async markHarvested(manager: EntityManager, seqs: number[]): Promise<void> {
    await manager.query(`UPDATE crawl_pages SET harvested = true WHERE seq = ANY($1::bigint[])`, [seqs]);
  }

  /** The job of the crawl's start page (its first page), or null before it was queued. */
  async startPageJob(crawlId: string): Promise<string | null> {
    const [row] = await sqlRows<{ job_id: string | null }>(
      this.db,
      `SELECT job_id FROM crawl_pages WHERE crawl_id = $1 ORDER BY seq LIMIT 1`,
      [crawlId],
    );
    return row?.job_id ?? null;
  }

  /** Up to `limit` pages of the crawl in discovery order after `afterSeq` (0: from the first). */
  async list(crawlId: string, afterSeq: number, limit: number): Promise<ListedPage[]> {
    const rows = await sqlRows<{ seq: string; url: string; depth: number; job_id: string | null }>(
      this.db,
      `SELECT seq, normalised_url AS url, depth, job_id FROM crawl_pages WHERE crawl_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
      [crawlId, afterSeq, limit],
    );
    return rows.map((r) => ({ seq: Number(r.seq), url: r.url, depth: r.depth, jobId: r.job_id }));
  }
}
