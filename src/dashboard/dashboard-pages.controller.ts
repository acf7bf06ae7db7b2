import { Body, Controller, Get, Param, Post, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { UserView } from '../accounts/users.service';
import { DashboardAuthGuard } from './dashboard-auth.guard';
import { DashboardExceptionFilter } from './dashboard-exception.filter';
import { DashboardRequest, DashboardError } from './dashboard-request';
import { SignedIn } from './dashboard-sessions.service';
import { DashboardViews } from './dashboard-views';
import { DashboardService } from './dashboard.service';

type Form = Record<string, unknown>;

/**
 * The signed-in pages (docs/dashboard.md): Overview, API keys, Webhooks, Screenshots, Runs, Account. Each handler
 * makes one {@link DashboardService} call and renders a template; POSTs need the CSRF token (checked
 * by the dashboard middleware). Secrets (a new key, a webhook signing secret) are rendered in the
 * POST's response only, never stored in a page that can be reloaded.
 */
@ApiExcludeController()
@Controller('dashboard')
@UseGuards(DashboardAuthGuard)
@UseFilters(DashboardExceptionFilter)
export class DashboardPagesController {
  constructor(
    private readonly dashboard: DashboardService,
    private readonly views: DashboardViews,
  ) {}

  @Get()
  async overview(@Req() req: DashboardRequest, @Res() res: Response): Promise<void> {
    const usage = await this.dashboard.overview(user(req));
    this.views.send(res, 200, 'overview', page(req, 'overview', 'Overview', { usage }));
  }

  @Get('keys')
  async keys(@Req() req: DashboardRequest, @Res() res: Response, @Query('revoked') revoked?: string): Promise<void> {
    const keys = await this.dashboard.keys(user(req));
    this.views.send(res, 200, 'keys', page(req, 'keys', 'API keys', { keys, created: null, error: null, revoked: revoked ?? null }));
  }

  @Post('keys')
  async createKey(@Req() req: DashboardRequest, @Res() res: Response, @Body() form: Form): Promise<void> {
    const result = await this.dashboard.createKey(user(req), String(form.name ?? ''));
    const keys = await this.dashboard.keys(user(req));
    const data = result.ok ? { created: result.value, error: null } : { created: null, error: result.error, name: form.name };
    this.views.send(res, result.ok ? 201 : (result.status ?? 400), 'keys', page(req, 'keys', 'API keys', { keys, revoked: null, ...data }));
  }

  @Post('keys/:id/revoke')
  async revokeKey(@Req() req: DashboardRequest, @Res() res: Response, @Param('id') id: string): Promise<void> {
    await this.dashboard.revokeKey(user(req), id);
    res.redirect(303, `/dashboard/keys?revoked=${encodeURIComponent(id)}`);
  }

  @Get('webhooks')
  async webhooks(@Req() req: DashboardRequest, @Res() res: Response): Promise<void> {
    const endpoints = await this.dashboard.endpoints(user(req));
    this.views.send(res, 200, 'webhooks', page(req, 'webhooks', 'Webhooks', { endpoints, created: null, error: null, form: {} }));
  }

  @Post('webhooks')
  async createWebhook(@Req() req: DashboardRequest, @Res() res: Response, @Body() form: Form): Promise<void> {
    const result = await this.dashboard.createEndpoint(user(req), form);
    const endpoints = await this.dashboard.endpoints(user(req));
    const data = result.ok ? { created: result.value, error: null, form: {} } : { created: null, error: result.error, form };
    this.views.send(res, result.ok ? 201 : (result.status ?? 400), 'webhooks', page(req, 'webhooks', 'Webhooks', { endpoints, ...data }));
  }

  @Get('webhooks/:id')
  async webhook(@Req() req: DashboardRequest, @Res() res: Response, @Param('id') id: string): Promise<void> {
    await this.renderEndpoint(req, res, id, {});
  }

  @Get('webhooks/:id/deliveries')
  async deliveries(@Req() req: DashboardRequest, @Res() res: Response, @Param('id') id: string): Promise<void> {
    const deliveries = await this.dashboard.deliveries(user(req), id);
    this.views.send(res, 200, 'partials/deliveries', { endpointId: id, deliveries, csrfToken: req.dashboard.csrfToken });
  }

  @Post('webhooks/:id/rotate')
  async rotate(@Req() req: DashboardRequest, @Res() res: Response, @Param('id') id: string, @Body() form: Form): Promise<void> {
    const rotated = await this.dashboard.rotateEndpoint(user(req), id, form.overlap);
    await this.renderEndpoint(req, res, id, { secret: rotated.secret, overlapS: rotated.overlapS });
  }

  @Post('webhooks/:id/edit')
  async editWebhook(@Req() req: DashboardRequest, @Res() res: Response, @Param('id') id: string, @Body() form: Form): Promise<void> {
    const result = await this.dashboard.updateEndpoint(user(req), id, form);
    await this.renderEndpoint(
      req,
      res,
      id,
      result.ok ? { saved: true } : { editError: result.error, editForm: form },
      result.ok ? 200 : 400,
    );
  }

  @Post('webhooks/:id/enabled')
  async setEnabled(@Req() req: DashboardRequest, @Res() res: Response, @Param('id') id: string, @Body() form: Form): Promise<void> {
    await this.dashboard.setEndpointEnabled(user(req), id, form.enabled === 'true');
    res.redirect(303, `/dashboard/webhooks/${encodeURIComponent(id)}`);
  }

  @Post('webhooks/:id/deliveries/:deliveryId/resend')
  async resend(
    @Req() req: DashboardRequest,
    @Res() res: Response,
    @Param('id') id: string,
    @Param('deliveryId') deliveryId: string,
  ): Promise<void> {
    const result = await this.dashboard.resendDelivery(user(req), id, deliveryId);
    await this.renderEndpoint(req, res, id, result.ok ? { resentDeliveryId: result.value } : { actionError: result.error });
  }

  @Post('webhooks/:id/test')
  async test(@Req() req: DashboardRequest, @Res() res: Response, @Param('id') id: string): Promise<void> {
    const deliveryId = await this.dashboard.testEndpoint(user(req), id);
    await this.renderEndpoint(req, res, id, { testDeliveryId: deliveryId });
  }

  @Post('webhooks/:id/delete')
  async deleteWebhook(@Req() req: DashboardRequest, @Res() res: Response, @Param('id') id: string): Promise<void> {
    await this.dashboard.deleteEndpoint(user(req), id);
    res.redirect(303, '/dashboard/webhooks');
  }

  @Get('screenshots')
  async screenshots(@Req() req: DashboardRequest, @Res() res: Response): Promise<void> {
    const keys = await this.dashboard.keys(user(req));
    const jobs = await this.dashboard.jobs(user(req), keys);
    this.views.send(res, 200, 'screenshots', page(req, 'screenshots', 'Screenshots', { jobs }));
  }

  @Get('screenshots/:id')
  async screenshot(@Req() req: DashboardRequest, @Res() res: Response, @Param('id') id: string): Promise<void> {
    const job = await this.dashboard.job(user(req), id);
    // The job card's own polling gets the card; a boosted link (also an htmx request) gets the page.
    if (req.headers['hx-request'] && !req.headers['hx-boosted']) return this.views.send(res, 200, 'partials/job', { job });
    this.views.send(res, 200, 'screenshot', page(req, 'screenshots', `Screenshot ${job.id}`, { job }));
  }

  @Get('runs')
  async runs(@Req() req: DashboardRequest, @Res() res: Response, @Query('cursor') cursor?: string): Promise<void> {
    const keys = await this.dashboard.keys(user(req));
    const { runs, nextCursor } = await this.dashboard.runPage(user(req), keys, cursor);
    this.views.send(res, 200, 'runs', page(req, 'runs', 'Runs', { runs, nextCursor, paged: Boolean(cursor) }));
  }

  @Get('runs/:id')
  async run(
    @Req() req: DashboardRequest,
    @Res() res: Response,
    @Param('id') id: string,
    @Query('canceled') canceled?: string,
  ): Promise<void> {
    await this.renderRun(req, res, 200, id, { notice: canceled === '1' ? 'Cancel requested.' : null });
  }

  @Post('runs/:id/cancel')
  async cancelRun(@Req() req: DashboardRequest, @Res() res: Response, @Param('id') id: string): Promise<void> {
    const result = await this.dashboard.cancelRun(user(req), id);
    if (!result.ok) return this.renderRun(req, res, 409, id, { actionError: result.error });
    res.redirect(303, `/dashboard/runs/${encodeURIComponent(id)}?canceled=1`);
  }

  @Get('account')
  async account(@Req() req: DashboardRequest, @Res() res: Response, @Query('done') done?: string): Promise<void> {
    await this.renderAccount(req, res, 200, {
      notice: done === 'removed' ? 'Member removed.' : done === 'session' ? 'Session signed out.' : null,
    });
  }

  @Post('account/password')
  async changePassword(@Req() req: DashboardRequest, @Res() res: Response, @Body() form: Form): Promise<void> {
    const result = await this.dashboard.changePassword(req.dashboard.signedIn as SignedIn, form);
    await this.renderAccount(
      req,
      res,
      result.ok ? 200 : 400,
      result.ok ? { notice: 'Password changed.' } : { passwordError: result.error },
    );
  }

  @Post('account/invite')
  async invite(@Req() req: DashboardRequest, @Res() res: Response, @Body() form: Form): Promise<void> {
    const result = await this.dashboard.invite(user(req), String(form.email ?? ''));
    await this.renderAccount(
      req,
      res,
      result.ok ? 201 : 400,
      result.ok ? { invited: result.value } : { inviteError: result.error, inviteEmail: form.email },
    );
  }

  @Post('account/members/:id/remove')
  async removeMember(@Req() req: DashboardRequest, @Res() res: Response, @Param('id') id: string): Promise<void> {
    const result = await this.dashboard.removeMember(user(req), id);
    if (!result.ok) return this.renderAccount(req, res, 403, { memberError: result.error });
    res.redirect(303, '/dashboard/account?done=removed');
  }

  @Post('account/sessions/:id/revoke')
  async endSession(@Req() req: DashboardRequest, @Res() res: Response, @Param('id') id: string): Promise<void> {
    await this.dashboard.endSession(user(req), id);
    res.redirect(303, '/dashboard/account?done=session');
  }

  private async renderEndpoint(
    req: DashboardRequest,
    res: Response,
    id: string,
    extra: Record<string, unknown>,
    status = 200,
  ): Promise<void> {
    const endpoint = await this.dashboard.endpoint(user(req), id);
    const deliveries = await this.dashboard.deliveries(user(req), id);
    this.views.send(
      res,
      status,
      'webhook',
      page(req, 'webhooks', `Webhook ${endpoint.url}`, {
        endpoint,
        deliveries,
        secret: null,
        overlapS: 0,
        testDeliveryId: null,
        resentDeliveryId: null,
        actionError: null,
        saved: false,
        editError: null,
        editForm: null,
        ...extra,
      }),
    );
  }

  private async renderRun(req: DashboardRequest, res: Response, status: number, id: string, extra: Record<string, unknown>): Promise<void> {
    const run = await this.dashboard.run(user(req), await this.dashboard.keys(user(req)), id);
    this.views.send(res, status, 'run', page(req, 'runs', `Run ${run.id}`, { run, notice: null, actionError: null, ...extra }));
  }

  private async renderAccount(req: DashboardRequest, res: Response, status: number, extra: Record<string, unknown>): Promise<void> {
    const account = await this.dashboard.account(req.dashboard.signedIn as SignedIn);
    this.views.send(res, status, 'account', page(req, 'account', 'Account', { ...account, notice: null, invited: null, ...extra }));
  }
}

/** Unknown dashboard paths: the dashboard's 404 page (registered last). */
@ApiExcludeController()
@Controller('dashboard')
@UseGuards(DashboardAuthGuard)
@UseFilters(DashboardExceptionFilter)
export class DashboardNotFoundController {
  @Get('*path')
  notFound(): never {
    throw DashboardError.notFound();
  }
}

/** The signed-in user of a page behind {@link DashboardAuthGuard}. */
export function user(req: DashboardRequest): UserView {
  return (req.dashboard.signedIn as SignedIn).user;
}

/** Data every signed-in page's layout needs. */
export function page(req: DashboardRequest, active: string, title: string, data: Record<string, unknown>): Record<string, unknown> {
  return { signedIn: req.dashboard.signedIn, csrfToken: req.dashboard.csrfToken, active, title, ...data };
}
