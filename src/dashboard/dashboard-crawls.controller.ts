import { Controller, Get, Param, Post, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { CrawlsService } from '../crawls/crawls.service';
import { DashboardAuthGuard } from './dashboard-auth.guard';
import { DashboardExceptionFilter } from './dashboard-exception.filter';
import { page, user } from './dashboard-pages.controller';
import { DashboardRequest, rethrowAsNotFoundPage } from './dashboard-request';
import { DashboardViews } from './dashboard-views';

/** Pages of a crawl shown on its dashboard page, with their thumbnails. */
const PAGES_SHOWN = 100;

/**
 * The Crawls pages (docs/dashboard.md, docs/crawls.md): the account's crawls with their progress, and
 * one crawl with its progress bar, counts, bundle link and its pages' thumbnails (the running page
 * reloads itself every few seconds). Calls {@link CrawlsService} as the REST API does.
 */
@ApiExcludeController()
@Controller('dashboard/crawls')
@UseGuards(DashboardAuthGuard)
@UseFilters(DashboardExceptionFilter)
export class DashboardCrawlsController {
  constructor(
    private readonly crawls: CrawlsService,
    private readonly views: DashboardViews,
  ) {}

  @Get()
  async list(@Req() req: DashboardRequest, @Res() res: Response, @Query('cursor') cursor?: string): Promise<void> {
    const account = { accountId: user(req).accountId };
    const { data, nextCursor } = await this.crawls.list(account, { limit: 20, cursor: cursor || undefined }).catch(notFoundOnBadInput);
    this.views.send(res, 200, 'crawls', page(req, 'crawls', 'Crawls', { crawls: data, nextCursor, paged: Boolean(cursor) }));
  }

  @Get(':id')
  async crawl(
    @Req() req: DashboardRequest,
    @Res() res: Response,
    @Param('id') id: string,
    @Query('canceled') canceled?: string,
  ): Promise<void> {
    const account = { accountId: user(req).accountId };
    const crawl = await this.crawls.get(account, id).catch(notFoundOnBadInput);
    const { data: pages, nextCursor } = await this.crawls.listPages(account, id, { limit: PAGES_SHOWN });
    const notice = canceled ? 'Cancel requested: the crawl stops creating jobs and ends once its started pages ended.' : null;
    this.views.send(res, 200, 'crawl', page(req, 'crawls', `Crawl ${crawl.id}`, { crawl, pages, more: Boolean(nextCursor), notice }));
  }

  @Post(':id/cancel')
  async cancel(@Req() req: DashboardRequest, @Res() res: Response, @Param('id') id: string): Promise<void> {
    await this.crawls.cancel({ accountId: user(req).accountId }, id).catch(notFoundOnBadInput);
    res.redirect(303, `/dashboard/crawls/${encodeURIComponent(id)}?canceled=1`);
  }
}

/** The API's 404 (and a malformed cursor) as the dashboard's own not-found page. */
function notFoundOnBadInput(err: unknown): never {
  rethrowAsNotFoundPage(err, [400, 404]);
}
