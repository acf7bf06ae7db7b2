import { Body, Controller, Get, Param, Post, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { plainToInstance } from 'class-transformer';
import type { Response } from 'express';
import { ApiKeysService } from '../auth/api-keys.service';
import { ApiError } from '../common/api-error';
import { CreateMonitorDto, UpdateMonitorDto } from '../monitors/dto/monitor.dto';
import { MonitorsService } from '../monitors/monitors.service';
import { ProfilesService } from '../profiles/profiles.service';
import { DashboardAuthGuard } from './dashboard-auth.guard';
import { DashboardExceptionFilter } from './dashboard-exception.filter';
import { page, user } from './dashboard-pages.controller';
import { DashboardRequest, rethrowAsNotFoundPage } from './dashboard-request';
import { DashboardViews } from './dashboard-views';
import { DashboardService, formProblems } from './dashboard.service';

type Form = Record<string, unknown>;

/** Notices after an action (`?done=`). */
const NOTICES: Record<string, string> = {
  check: 'Check started.',
  pause: 'Monitor paused.',
  resume: 'Monitor resumed.',
  create: 'Monitor created; its first check is due now.',
  edit: 'Monitor saved.',
  delete: 'Monitor deleted.',
};

/** Profiles offered in the monitor forms (the plan allows at most 50). */
const PROFILES_OFFERED = 100;

/** Checks shown on a monitor's page. */
const HISTORY_SIZE = 50;

/**
 * The Monitors pages (docs/dashboard.md, docs/monitors.md): the account's monitors with their last
 * check, a form to create one (URL, schedule, threshold, ignored selectors, profile; for one of the
 * account's active API keys), pause / resume / check now, and one monitor's history, a change shown as
 * baseline, current and diff images side by side with its regions outlined, with a form to edit it and
 * a delete. Calls {@link MonitorsService} as the REST API does, with its validation.
 */
@ApiExcludeController()
@Controller('dashboard/monitors')
@UseGuards(DashboardAuthGuard)
@UseFilters(DashboardExceptionFilter)
export class DashboardMonitorsController {
  constructor(
    private readonly monitors: MonitorsService,
    private readonly profiles: ProfilesService,
    private readonly apiKeys: ApiKeysService,
    private readonly dashboard: DashboardService,
    private readonly views: DashboardViews,
  ) {}

  @Get()
  async list(
    @Req() req: DashboardRequest,
    @Res() res: Response,
    @Query('cursor') cursor?: string,
    @Query('done') done?: string,
  ): Promise<void> {
    await this.renderList(req, res, 200, { cursor, notice: NOTICES[done ?? ''] ?? null });
  }

  /** Creates a monitor from the form for one of the account's active API keys; a mistake is the form's message (400, or 403 over the plan). */
  @Post()
  async create(@Req() req: DashboardRequest, @Res() res: Response, @Body() form: Form): Promise<void> {
    const caller = await this.apiKeys.callerFor(user(req).accountId, String(form.apiKeyId ?? ''));
    if (!caller) return this.renderList(req, res, 400, { error: 'Choose one of your active API keys.', form });
    const dto = plainToInstance(CreateMonitorDto, monitorBody(form, 'create'));
    const problem = await formOutcome(dto, () => this.monitors.create(caller, dto));
    if (problem) return this.renderList(req, res, problem.status, { error: problem.message, form });
    res.redirect(303, '/dashboard/monitors?done=create');
  }

  @Get(':id')
  async monitor(@Req() req: DashboardRequest, @Res() res: Response, @Param('id') id: string, @Query('done') done?: string): Promise<void> {
    await this.renderMonitor(req, res, id, 200, { notice: NOTICES[done ?? ''] ?? null });
  }

  /** Saves the edit form (URL, schedule, threshold, ignored selectors, profile) as `PATCH /v1/monitors/{id}` would. */
  @Post(':id/edit')
  async edit(@Req() req: DashboardRequest, @Res() res: Response, @Param('id') id: string, @Body() form: Form): Promise<void> {
    const dto = plainToInstance(UpdateMonitorDto, monitorBody(form, 'edit'));
    const account = { accountId: user(req).accountId };
    const problem = await formOutcome(dto, () => this.monitors.update(account, id, dto).catch(rethrowAsNotFoundPage));
    if (problem) return this.renderMonitor(req, res, id, problem.status, { error: problem.message, form });
    res.redirect(303, `/dashboard/monitors/${encodeURIComponent(id)}?done=edit`);
  }

  @Post(':id/delete')
  async remove(@Req() req: DashboardRequest, @Res() res: Response, @Param('id') id: string): Promise<void> {
    await this.monitors.remove({ accountId: user(req).accountId }, id).catch(rethrowAsNotFoundPage);
    res.redirect(303, '/dashboard/monitors?done=delete');
  }

  private async renderList(
    req: DashboardRequest,
    res: Response,
    status: number,
    extra: { cursor?: string; notice?: string | null; error?: string; form?: Form },
  ): Promise<void> {
    const account = { accountId: user(req).accountId };
    const { cursor, ...shown } = extra;
    const { data, nextCursor } = await this.monitors.list(account, { limit: 20, cursor: cursor || undefined }).catch(rethrowAsNotFoundPage);
    const rows = await Promise.all(
      data.map(async (monitor) => ({ monitor, last: (await this.monitors.listChecks(account, monitor.id, { limit: 1 })).data[0] ?? null })),
    );
    const [apiKeys, profiles] = await Promise.all([this.dashboard.activeApiKeys(user(req)), this.profileChoices(account)]);
    this.views.send(
      res,
      status,
      'monitors',
      page(req, 'monitors', 'Monitors', {
        rows,
        nextCursor,
        paged: Boolean(cursor),
        notice: null,
        error: null,
        form: {},
        apiKeys,
        profiles,
        ...shown,
      }),
    );
  }

  private async renderMonitor(
    req: DashboardRequest,
    res: Response,
    id: string,
    status: number,
    extra: { notice?: string | null; error?: string; form?: Form },
  ): Promise<void> {
    const account = { accountId: user(req).accountId };
    const monitor = await this.monitors.get(account, id).catch(rethrowAsNotFoundPage);
    const { data: checks } = await this.monitors.listChecks(account, id, { limit: HISTORY_SIZE });
    const profiles = await this.profileChoices(account);
    this.views.send(
      res,
      status,
      'monitor',
      page(req, 'monitors', `Monitor ${monitor.id}`, { monitor, checks, profiles, notice: null, error: null, form: null, ...extra }),
    );
  }

  /** The account's profiles as choices of the forms: id, name and domains. */
  private async profileChoices(account: { accountId: string }): Promise<{ id: string; name: string; allowedDomains: string[] }[]> {
    const { data } = await this.profiles.list(account, { limit: PROFILES_OFFERED });
    return data.map(({ id, name, allowedDomains }) => ({ id, name, allowedDomains }));
  }

  @Post(':id/check')
  async check(
    @Req() req: DashboardRequest,
    @Res() res: Response,
    @Param('id') id: string,
    @Body() form: Record<string, unknown>,
  ): Promise<void> {
    await this.monitors.checkNow({ accountId: user(req).accountId }, id).catch(rethrowAsNotFoundPage);
    res.redirect(303, back(form, id, 'check'));
  }

  @Post(':id/pause')
  async pause(
    @Req() req: DashboardRequest,
    @Res() res: Response,
    @Param('id') id: string,
    @Body() form: Record<string, unknown>,
  ): Promise<void> {
    await this.monitors.update({ accountId: user(req).accountId }, id, { enabled: false }).catch(rethrowAsNotFoundPage);
    res.redirect(303, back(form, id, 'pause'));
  }

  @Post(':id/resume')
  async resume(
    @Req() req: DashboardRequest,
    @Res() res: Response,
    @Param('id') id: string,
    @Body() form: Record<string, unknown>,
  ): Promise<void> {
    await this.monitors.update({ accountId: user(req).accountId }, id, { enabled: true }).catch(rethrowAsNotFoundPage);
    res.redirect(303, back(form, id, 'resume'));
  }
}

/**
 * The body of `POST /v1/monitors` (`create`) or `PATCH /v1/monitors/{id}` (`edit`) from the form's
 * fields: `url`, `every` (seconds) or `cron` with `timezone`, `threshold` (0–1), `ignoreSelectors` (one
 * per line), `profile` and `profileCheck` (a selector), `description`. On `edit` an empty profile
 * removes it (`null`); empty fields are otherwise left out, so the API's defaults and messages apply.
 */
function monitorBody(form: Form, mode: 'create' | 'edit'): Record<string, unknown> {
  const text = (name: string) => String(form[name] ?? '').trim();
  const schedule = text('cron')
    ? { cron: text('cron'), ...(text('timezone') ? { timezone: text('timezone') } : {}) }
    : { intervalSeconds: Number(text('every')) };
  const ignoreSelectors = text('ignoreSelectors')
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean);
  const none = mode === 'edit' ? null : undefined;
  return {
    url: text('url'),
    schedule,
    diff: { ...(text('threshold') ? { threshold: Number(text('threshold')) } : {}), ignoreSelectors },
    profile: text('profile') || none,
    profileCheck: text('profileCheck') ? { selector: text('profileCheck') } : none,
    description: text('description'),
  };
}

/**
 * Validates `dto` as the API would, then runs `action`: null when it worked, else the person's mistake
 * with its status (400, 403 over the plan) for the form. Throws server errors and the dashboard's 404.
 */
async function formOutcome(dto: object, action: () => Promise<unknown>): Promise<{ status: number; message: string } | null> {
  const invalid = await formProblems(dto);
  if (invalid) return { status: 400, message: invalid };
  try {
    await action();
    return null;
  } catch (err) {
    if (!(err instanceof ApiError) || err.status >= 500) throw err;
    return { status: err.status, message: err.message };
  }
}

/** Where an action returns: the monitor's page when its form says so (`from=monitor`), else the list. */
function back(form: Record<string, unknown>, id: string, done: string): string {
  return `${form?.from === 'monitor' ? `/dashboard/monitors/${encodeURIComponent(id)}` : '/dashboard/monitors'}?done=${done}`;
}
