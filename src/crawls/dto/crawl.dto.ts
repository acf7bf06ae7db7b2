import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { CursorPageQueryDto } from '../../common/cursor-page-query.dto';
import type { JobStatus } from '../../screenshots/screenshot-job.entity';
import { CRAWL_STATUSES, CRAWL_STOPPED_REASONS, CrawlStatus, CrawlStoppedReason } from '../crawl.entity';

/** A crawl page's status: its job's, or `skipped` when it has none. */
const CRAWL_PAGE_STATUSES: readonly (JobStatus | 'skipped')[] = ['pending', 'processing', 'done', 'failed', 'skipped'];

/** The crawl object (CONTRACT.md, "Crawls"). */
export class CrawlDto {
  @ApiProperty({ example: 'crl_3fJ9kLmN2pQr5sTu7vWx9yZa' })
  id: string;

  @ApiProperty({ enum: CRAWL_STATUSES, description: 'pending → running → completed | failed | canceled' })
  status: CrawlStatus;

  @ApiProperty({ description: 'The start URL', example: 'https://example.com/' })
  url: string;

  @ApiProperty({ type: 'integer', description: 'Pages found in scope, each once' })
  pagesFound: number;

  @ApiProperty({ type: 'integer', description: 'Pages given a job (each counted against the quota when created)' })
  pagesQueued: number;

  @ApiProperty({ type: 'integer', description: 'Jobs ended done' })
  pagesDone: number;

  @ApiProperty({ type: 'integer', description: 'Jobs ended failed' })
  pagesFailed: number;

  @ApiProperty({
    type: 'string',
    enum: CRAWL_STOPPED_REASONS,
    nullable: true,
    description: 'Why the crawl stopped creating jobs; null while it still may create some',
  })
  stoppedReason: CrawlStoppedReason | null;

  @ApiProperty({
    type: 'string',
    nullable: true,
    description: 'Capability URL of the ZIP (every result file and manifest.json), once the crawl ended; same TTL as results',
  })
  bundleUrl: string | null;

  @ApiProperty({ type: 'string', nullable: true, description: 'Why a failed crawl failed (customer-safe); null otherwise' })
  error: string | null;

  @ApiProperty({ description: 'ISO 8601 UTC with milliseconds', example: '2026-11-20T12:00:00.000Z' })
  createdAt: string;

  @ApiProperty({ type: 'string', nullable: true, description: 'When the crawl ended (ISO 8601 UTC)' })
  completedAt: string | null;
}

/** `GET /v1/crawls`. */
export class CrawlListDto {
  @ApiProperty({ type: [CrawlDto] })
  data: CrawlDto[];

  @ApiProperty({ type: 'string', nullable: true, description: 'Pass as `cursor` for the next page; null on the last' })
  nextCursor: string | null;
}

/** Query of `GET /v1/crawls`. */
export class ListCrawlsQueryDto extends CursorPageQueryDto {
  @ApiPropertyOptional({ enum: CRAWL_STATUSES })
  @IsOptional()
  @IsIn(CRAWL_STATUSES)
  status?: CrawlStatus;
}

/** One page of a crawl (CONTRACT.md, "Crawls": `GET /v1/crawls/:id/pages`). */
export class CrawlPageDto {
  @ApiProperty({ description: 'The page URL, normalised', example: 'https://example.com/about' })
  url: string;

  @ApiProperty({ type: 'integer', description: 'Links followed from the start URL' })
  depth: number;

  @ApiProperty({ type: 'string', nullable: true, description: 'Its screenshot job (`GET /v1/screenshot/{id}`); null when never queued' })
  jobId: string | null;

  @ApiProperty({
    enum: CRAWL_PAGE_STATUSES,
    description: "The job's status; `skipped` for a page found but not queued (maxPages, quota, cancel, or still waiting)",
  })
  status: JobStatus | 'skipped';

  @ApiProperty({ type: 'string', nullable: true, description: 'Capability URL of the result, once done' })
  resultUrl: string | null;

  @ApiProperty({ type: 'string', nullable: true, description: "The page's title, once done" })
  title: string | null;
}

/** `GET /v1/crawls/:id/pages`: in discovery order. */
export class CrawlPageListDto {
  @ApiProperty({ type: [CrawlPageDto] })
  data: CrawlPageDto[];

  @ApiProperty({ type: 'string', nullable: true, description: 'Pass as `cursor` for the next page; null on the last' })
  nextCursor: string | null;
}
