import { Body, Controller, Get, Param, Post, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { DashboardAuthGuard } from './dashboard-auth.guard';
import { DashboardExceptionFilter } from './dashboard-exception.filter';
import { page, user } from './dashboard-pages.controller';
import { DashboardRequest } from './dashboard-request';
import { DashboardRenderLinksService } from './dashboard-render-links.service';
import { DashboardViews } from './dashboard-views';
import { DashboardService } from './dashboard.service';

type Form = Record<string, unknown>;

/**
 * The Render links page (docs/dashboard.md): render keys (create with the secret shown once in the
 * POST's answer, rotate, delete) and the link builder, whose answer shows the signed link and an
 * `<img>` of it. POSTs need the CSRF token (the dashboard middleware).
 */
@ApiExcludeController()
@Controller('dashboard/render-links')
@UseGuards(DashboardAuthGuard)
@UseFilters(DashboardExceptionFilter)
export class DashboardRenderLinksController {
  constructor(
    private readonly renderLinks: DashboardRenderLinksService,
    private readonly dashboard: DashboardService,
    private readonly views: DashboardViews,
  ) {}

  @Get()
  async show(@Req() req: DashboardRequest, @Res() res: Response): Promise<void> {
    await this.render(req, res, 200, {});
  }

  @Post()
  async create(@Req() req: DashboardRequest, @Res() res: Response, @Body() form: Form): Promise<void> {
    const result = await this.renderLinks.create(user(req), form);
    const data = result.ok ? { created: result.value } : { createError: result.error, createForm: form };
    await this.render(req, res, result.ok ? 201 : (result.status ?? 400), data);
  }

  @Post('build')
  async build(@Req() req: DashboardRequest, @Res() res: Response, @Body() form: Form): Promise<void> {
    const result = await this.renderLinks.build(user(req), form);
    // The secret is left out of the form echoed back: it is used for this request only.
    const buildForm = { ...form, secret: undefined };
    const data = result.ok ? { built: result.value, buildForm } : { buildError: result.error, buildForm };
    await this.render(req, res, result.ok ? 200 : 400, data);
  }

  @Post(':id/rotate')
  async rotate(@Req() req: DashboardRequest, @Res() res: Response, @Param('id') id: string, @Body() form: Form): Promise<void> {
    await this.render(req, res, 200, { rotated: await this.renderLinks.rotate(user(req), id, form.overlap) });
  }

  @Post(':id/delete')
  async remove(@Req() req: DashboardRequest, @Res() res: Response, @Param('id') id: string): Promise<void> {
    await this.renderLinks.remove(user(req), id);
    res.redirect(303, '/dashboard/render-links');
  }

  private async render(req: DashboardRequest, res: Response, status: number, extra: Record<string, unknown>): Promise<void> {
    const [renderKeys, apiKeys] = await Promise.all([this.renderLinks.list(user(req)), this.dashboard.activeApiKeys(user(req))]);
    this.views.send(
      res,
      status,
      'render-links',
      page(req, 'render-links', 'Render links', {
        renderKeys,
        apiKeys,
        created: null,
        createError: null,
        createForm: {},
        rotated: null,
        built: null,
        buildError: null,
        buildForm: {},
        ...extra,
      }),
    );
  }
}
