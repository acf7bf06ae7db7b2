import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBody, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { AuthenticatedKey } from '../auth/api-keys.service';
import { ApiKeyAuth, CurrentApiKey } from '../auth/current-api-key.decorator';
import { ApiErrorResponses } from '../common/api-error-responses.decorator';
import { PROFILE_USE_400 } from '../profiles/profile-errors';
import { CursorPageQueryDto } from '../common/cursor-page-query.dto';
import { AUTHENTICATED_RESPONSE_HEADERS } from '../common/operational-headers';
import { CrawlsService } from './crawls.service';
import { CreateCrawlDto } from './dto/create-crawl.dto';
import { CrawlDto, CrawlListDto, CrawlPageListDto, ListCrawlsQueryDto } from './dto/crawl.dto';

const PENDING_CRAWL_EXAMPLE: CrawlDto = {
  id: 'crl_3fJ9kLmN2pQr5sTu7vWx9yZa',
  status: 'pending',
  url: 'https://example.com/',
  pagesFound: 0,
  pagesQueued: 0,
  pagesDone: 0,
  pagesFailed: 0,
  stoppedReason: null,
  bundleUrl: null,
  error: null,
  createdAt: '2026-11-20T12:00:00.000Z',
  completedAt: null,
};
/** A completed crawl as the API shows it (OpenAPI examples; `crawl.completed`'s example derives from it). */
export const COMPLETED_CRAWL_EXAMPLE: CrawlDto = {
  ...PENDING_CRAWL_EXAMPLE,
  status: 'completed',
  pagesFound: 42,
  pagesQueued: 42,
  pagesDone: 41,
  pagesFailed: 1,
  stoppedReason: 'exhausted',
  bundleUrl: 'https://glimpse.example.com/files/Zx2mNw8PqRs4kq1Jd0aZxY2mNw8PqRs4kq1Jd0aZxY2.zip',
  completedAt: '2026-11-20T12:01:30.000Z',
};
const CRAWL_ID_PARAM = { name: 'id', description: 'Crawl id from `createCrawl`', example: 'crl_3fJ9kLmN2pQr5sTu7vWx9yZa' };

/** `/v1/crawls` (CONTRACT.md, "Crawls"): thin; the rules live in {@link CrawlsService}. */
@ApiTags('crawls')
@ApiKeyAuth()
@Controller('v1/crawls')
export class CrawlsController {
  constructor(private readonly crawls: CrawlsService) {}

  @Post()
  @HttpCode(202)
  @ApiOperation({
    operationId: 'createCrawl',
    summary: 'Crawl a site',
    description:
      "Discovers the site's pages from robots.txt, its sitemaps and the links of each captured page, within `scope`, `include`/`exclude`, " +
      '`maxDepth` and `maxPages`, and captures each with an ordinary screenshot job (`crawlId` set), counted against the quota when created. ' +
      'When every job ended, `bundleUrl` gives a ZIP of every result file and `manifest.json`. Poll `GET /v1/crawls/{id}` or subscribe to ' +
      '`crawl.completed` / `crawl.failed`.',
  })
  @ApiBody({
    type: CreateCrawlDto,
    examples: {
      minimal: { summary: 'Up to 100 pages of a site', value: { url: 'https://example.com/' } },
      docs: {
        summary: 'The docs section, full pages with markdown',
        value: {
          url: 'https://example.com/docs/',
          maxPages: 200,
          include: ['/docs/*'],
          capture: { fullPage: true, extract: ['markdown'] },
        },
      },
    },
  })
  @ApiAcceptedResponse({
    type: CrawlDto,
    description: 'Crawl accepted',
    headers: AUTHENTICATED_RESPONSE_HEADERS,
    example: PENDING_CRAWL_EXAMPLE,
  })
  @ApiErrorResponses(
    PROFILE_USE_400,
    401,
    {
      status: 403,
      codes: ['PLAN_LIMIT_REACHED'],
      description: "maxPages above the plan cap, or the plan's crawls running at once reached",
    },
    { status: 404, codes: ['NOT_FOUND'], description: '`capture.profile` is not a profile of the account' },
    413,
    415,
    500,
  )
  create(@CurrentApiKey() caller: AuthenticatedKey, @Body() dto: CreateCrawlDto): Promise<CrawlDto> {
    return this.crawls.create(caller, dto);
  }

  @Get()
  @ApiOperation({
    operationId: 'listCrawls',
    summary: 'List crawls',
    description: "The account's crawls, newest first; pass `nextCursor` as `cursor` for the next page.",
  })
  @ApiOkResponse({
    type: CrawlListDto,
    description: 'A page of crawls',
    headers: AUTHENTICATED_RESPONSE_HEADERS,
    example: { data: [COMPLETED_CRAWL_EXAMPLE], nextCursor: null },
  })
  @ApiErrorResponses({ status: 400, codes: ['VALIDATION_FAILED', 'INVALID_ORGANIZATION_ID'] }, 401, 500)
  list(@CurrentApiKey() caller: AuthenticatedKey, @Query() query: ListCrawlsQueryDto): Promise<CrawlListDto> {
    return this.crawls.list(caller, query);
  }

  @Get(':id')
  @ApiOperation({
    operationId: 'getCrawl',
    summary: 'Get a crawl',
    description: 'The crawl with its counts so far; `bundleUrl` once it ended.',
  })
  @ApiParam(CRAWL_ID_PARAM)
  @ApiOkResponse({ type: CrawlDto, description: 'The crawl', headers: AUTHENTICATED_RESPONSE_HEADERS, example: COMPLETED_CRAWL_EXAMPLE })
  @ApiErrorResponses({ status: 400, codes: ['INVALID_ORGANIZATION_ID'] }, 401, 404, 500)
  get(@CurrentApiKey() caller: AuthenticatedKey, @Param('id') id: string): Promise<CrawlDto> {
    return this.crawls.get(caller, id);
  }

  @Get(':id/pages')
  @ApiOperation({
    operationId: 'listCrawlPages',
    summary: "List a crawl's pages",
    description:
      'The pages found, in discovery order, each with its job, status, result URL and title; pass `nextCursor` as `cursor` for the next page.',
  })
  @ApiParam(CRAWL_ID_PARAM)
  @ApiOkResponse({
    type: CrawlPageListDto,
    description: 'A page of pages',
    headers: AUTHENTICATED_RESPONSE_HEADERS,
    example: {
      data: [
        {
          url: 'https://example.com/about',
          depth: 1,
          jobId: 'scr_8cV1nQw3ZrT5yU7iO9pA2sD4',
          status: 'done',
          resultUrl: 'https://glimpse.example.com/files/2vQdLr0tYb3nWc5mKz7hJf1pSg4aDe6uVi9oRl2x8cVq.png',
          title: 'About us',
        },
      ],
      nextCursor: null,
    },
  })
  @ApiErrorResponses({ status: 400, codes: ['VALIDATION_FAILED', 'INVALID_ORGANIZATION_ID'] }, 401, 404, 500)
  pages(@CurrentApiKey() caller: AuthenticatedKey, @Param('id') id: string, @Query() query: CursorPageQueryDto): Promise<CrawlPageListDto> {
    return this.crawls.listPages(caller, id, query);
  }

  @Post(':id/cancel')
  @HttpCode(202)
  @ApiOperation({
    operationId: 'cancelCrawl',
    summary: 'Cancel a crawl',
    description:
      'A `pending` crawl ends `canceled` at once; a `running` one stops creating jobs, its jobs not yet started end `failed` (not counted back), ' +
      'and it ends `canceled` with its bundle once the others ended. An ended crawl is answered as it is.',
  })
  @ApiParam(CRAWL_ID_PARAM)
  @ApiAcceptedResponse({
    type: CrawlDto,
    description: 'Cancel accepted',
    headers: AUTHENTICATED_RESPONSE_HEADERS,
    example: PENDING_CRAWL_EXAMPLE,
  })
  @ApiErrorResponses({ status: 400, codes: ['INVALID_ORGANIZATION_ID'] }, 401, 404, 500)
  cancel(@CurrentApiKey() caller: AuthenticatedKey, @Param('id') id: string): Promise<CrawlDto> {
    return this.crawls.cancel(caller, id);
  }
}
