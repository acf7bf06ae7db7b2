import { Body, Controller, Get, Param, Post, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiError } from '../common/api-error';
import { MonitorsService } from '../monitors/monitors.service';
import { DashboardAuthGuard } from './dashboard-auth.guard';
import { DashboardExceptionFilter } from './dashboard-exception.filter';
import { page, user } from './dashboard-pages.controller';
import { DashboardError, DashboardRequest } from './dashboard-request';
import { DashboardViews } from './dashboard-views';

/** Checks shown on a monitor's page. */
const HISTORY_SIZE = 50;

/**
 * The Monitors pages (docs/dashboard.md, docs/monitors.md): the account's monitors with their last
 * check, pause / resume / check now, and one monitor's history, a change shown as baseline, current and
 * diff images side by side with its regions outlined. Calls {@link MonitorsService} as the REST API does.
 */
@ApiExcludeController()
@Controller('dashboard/monitors')
@UseGuards(DashboardAuthGuard)
@UseFilters(DashboardExceptionFilter)
export class DashboardMonitorsController {
  constructor(
    private readonly monitors: MonitorsService,
    private readonly views: DashboardViews,
  ) {}

  @Get()
  async list(
    @Req() req: DashboardRequest,
    @Res() res: Response,
    @Query('cursor') cursor?: string,
    @Query('done') done?: string,
  ): Promise<void> {
    const account = { accountId: user(req).accountId };
    const { data, nextCursor } = await this.monitors.list(account, { limit: 20, cursor: cursor || undefined }).catch(notFoundOnBadInput);
    const rows = await Promise.all(
      data.map(async (monitor) => ({ monitor, last: (await this.monitors.listChecks(account, monitor.id, { limit: 1 })).data[0] ?? null })),
    );
    const notice =
      done === 'check' ? 'Check started.' : done === 'pause' ? 'Monitor paused.' : done === 'resume' ? 'Monitor resumed.' : null;
    this.views.send(res, 200, 'monitors', page(req, 'monitors', 'Monitors', { rows, nextCursor, paged: Boolean(cursor), notice }));
  }

  @Get(':id')
  async monitor(@Req() req: DashboardRequest, @Res() res: Response, @Param('id') id: string, @Query('done') done?: string): Promise<void> {
    const account = { accountId: user(req).accountId };
    const monitor = await this.monitors.get(account, id).catch(notFoundOnBadInput);
    const { data: checks } = await this.monitors.listChecks(account, id, { limit: HISTORY_SIZE });
    const notice =
      done === 'check' ? 'Check started.' : done === 'pause' ? 'Monitor paused.' : done === 'resume' ? 'Monitor resumed.' : null;
    this.views.send(res, 200, 'monitor', page(req, 'monitors', `Monitor ${monitor.id}`, { monitor, checks, notice }));
  }

  @Post(':id/check')
  async check(
    @Req() req: DashboardRequest,
    @Res() res: Response,
    @Param('id') id: string,
    @Body() form: Record<string, unknown>,
  ): Promise<void> {
    await this.monitors.checkNow({ accountId: user(req).accountId }, id).catch(notFoundOnBadInput);
    res.redirect(303, back(form, id, 'check'));
  }

  @Post(':id/pause')
  async pause(
    @Req() req: DashboardRequest,
    @Res() res: Response,
    @Param('id') id: string,
    @Body() form: Record<string, unknown>,
  ): Promise<void> {
    await this.monitors.update({ accountId: user(req).accountId }, id, { enabled: false }).catch(notFoundOnBadInput);
    res.redirect(303, back(form, id, 'pause'));
  }

  @Post(':id/resume')
  async resume(
    @Req() req: DashboardRequest,
    @Res() res: Response,
    @Param('id') id: string,
    @Body() form: Record<string, unknown>,
  ): Promise<void> {
    await this.monitors.update({ accountId: user(req).accountId }, id, { enabled: true }).catch(notFoundOnBadInput);
    res.redirect(303, back(form, id, 'resume'));
  }
}

/** Where an action returns: the monitor's page when its form says so (`from=monitor`), else the list. */
function back(form: Record<string, unknown>, id: string, done: string): string {
  return `${form?.from === 'monitor' ? `/dashboard/monitors/${encodeURIComponent(id)}` : '/dashboard/monitors'}?done=${done}`;
}

/** The API's 404 (and a refused action) as the dashboard's own error page. */
function notFoundOnBadInput(err: unknown): never {
  if (err instanceof ApiError && err.status === 404) throw DashboardError.notFound();
  throw err;
}
