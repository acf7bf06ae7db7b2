import { Column, Entity, Index, JoinColumn, ManyToOne } from 'typeorm';
import { KeyOwnedWork } from '../auth/key-owned-work.entity';
import type { CaptureOptionsInput } from '../capture/capture-options';
import type { CrawlDiscover, CrawlScope } from './crawl-options';

/** Crawl states (CONTRACT.md, "Crawls"): `pending` → `running` → `completed` | `failed` | `canceled`, never back. */
export const CRAWL_STATUSES = ['pending', 'running', 'completed', 'failed', 'canceled'] as const;
export type CrawlStatus = (typeof CRAWL_STATUSES)[number];

/** Why a crawl stopped creating jobs (CONTRACT.md, "Crawls"). */
export const CRAWL_STOPPED_REASONS = ['maxPages', 'exhausted', 'canceled', 'quota'] as const;
export type CrawlStoppedReason = (typeof CRAWL_STOPPED_REASONS)[number];

/**
 * One crawl (CONTRACT.md, "Crawls"): what was asked, its state and its bundle. Its pages are
 * {@link CrawlPage} rows, each with at most one ordinary screenshot job (`screenshot_jobs.crawl_id`).
 */
@Entity({ name: 'crawls' })
@Index('IDX_crawls_account_created', ['accountId', 'createdAt', 'id'])
// The account's crawls not ended (plan limit on crawls running at once) and the reconciler's pending/running ones.
@Index('IDX_crawls_open', ['accountId'], { where: `status IN ('pending', 'running')` })
export class Crawl extends KeyOwnedWork {
  @Column({ type: 'varchar', length: 16 })
  status: CrawlStatus;

  /** The start URL, as given. */
  @Column({ type: 'text' })
  url: string;

  @Column({ type: 'varchar', length: 8 })
  discover: CrawlDiscover;

  @Column({ name: 'max_pages', type: 'int' })
  maxPages: number;

  @Column({ name: 'max_depth', type: 'int' })
  maxDepth: number;

  /** Globs over the URL's path and query; empty: every page is included. */
  @Column({ type: 'jsonb' })
  include: string[];

  @Column({ type: 'jsonb' })
  exclude: string[];

  @Column({ type: 'varchar', length: 8 })
  scope: CrawlScope;

  @Column({ name: 'respect_robots', type: 'boolean' })
  respectRobots: boolean;

  /** The capture options of every page's job, as given (without `url`). */
  @Column({ type: 'jsonb' })
  capture: CaptureOptionsInput;

  /** When robots.txt and the sitemaps were read and the first pages stored; null before. */
  @Column({ name: 'seeded_at', type: 'timestamptz', nullable: true })
  seededAt: Date | null;

  @Column({ name: 'stopped_reason', type: 'varchar', length: 16, nullable: true })
  stoppedReason: CrawlStoppedReason | null;

  /** Name of the bundle ZIP in storage once the crawl ended; null before, or when it could not be stored. */
  @Column({ name: 'bundle_file', type: 'varchar', length: 64, nullable: true })
  bundleFile: string | null;

  /** When the bundle was deleted, past `RESULT_TTL_DAYS` (CrawlLifecycle.purgeExpiredBundles); its URL is 404 since. */
  @Column({ name: 'bundle_deleted_at', type: 'timestamptz', nullable: true })
  bundleDeletedAt: Date | null;

  /** Customer-safe reason of a `failed` crawl. */
  @Column({ type: 'text', nullable: true })
  error: string | null;

  /** The counts as they were when the crawl ended (while it runs they are read from its pages). */
  @Column({ name: 'final_counts', type: 'jsonb', nullable: true })
  finalCounts: CrawlCounts | null;

  @Column({ name: 'cancel_requested_at', type: 'timestamptz', nullable: true })
  cancelRequestedAt: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'started_at', type: 'timestamptz', nullable: true })
  startedAt: Date | null;

  @Column({ name: 'completed_at', type: 'timestamptz', nullable: true })
  completedAt: Date | null;
}

/** A crawl's page counts (CONTRACT.md, "Crawls"): found, with a job, whose job ended `done`, `failed`. */
export interface CrawlCounts {
  pagesFound: number;
  pagesQueued: number;
  pagesDone: number;
  pagesFailed: number;
}

/**
 * One page a crawl found, once per normalised URL (UNIQUE (crawl_id, normalised_url): a page is never
 * discovered twice, whatever the process or the order), with the job capturing it once queued.
 */
@Entity({ name: 'crawl_pages' })
@Index('UQ_crawl_pages_url', ['crawlId', 'normalisedUrl'], { unique: true })
// The pages not queued yet, in discovery order; the pages whose links are still to be read.
@Index('IDX_crawl_pages_unqueued', ['crawlId', 'depth', 'seq'], { where: 'job_id IS NULL' })
@Index('IDX_crawl_pages_unharvested', ['crawlId'], { where: 'job_id IS NOT NULL AND NOT harvested' })
export class CrawlPage {
  /** Discovery order over every crawl (the pages' cursor). */
  @Column({ type: 'bigint', primary: true, generated: 'increment', transformer: { to: (v: unknown) => v, from: (v: string) => Number(v) } })
  seq: number;

  @Column({ name: 'crawl_id', type: 'varchar', length: 40 })
  crawlId: string;

  @ManyToOne(() => Crawl, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'crawl_id' })
  crawl?: Crawl;

  /** The URL as normalised (`normaliseUrl`), which is also the URL captured. */
  @Column({ name: 'normalised_url', type: 'text' })
  normalisedUrl: string;

  /** Links followed from the start URL (0 for it and the sitemaps' pages). */
  @Column({ type: 'int' })
  depth: number;

  /** The page's screenshot job once queued; null while it waits (or when the crawl stopped before it). */
  @Column({ name: 'job_id', type: 'varchar', length: 40, nullable: true })
  jobId: string | null;

  /** Whether the links of the page's ended job were read (or there were none to read). */
  @Column({ type: 'boolean', default: false })
  harvested: boolean;
}
