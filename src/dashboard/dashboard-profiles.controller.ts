import { Body, Controller, Get, Param, Post, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { plainToInstance } from 'class-transformer';
import type { Response } from 'express';
import { CreateProfileDto } from '../profiles/dto/profile.dto';
import { ProfilesService } from '../profiles/profiles.service';
import { DashboardAuthGuard } from './dashboard-auth.guard';
import { DashboardExceptionFilter } from './dashboard-exception.filter';
import { page, user } from './dashboard-pages.controller';
import { DashboardRequest, notFoundAsPage } from './dashboard-request';
import { DashboardViews } from './dashboard-views';
import { validatedFormAction } from './dashboard.service';

/** Profiles listed on the page (the plan allows at most 50). */
const PAGE_SIZE = 100;

/**
 * The Profiles page (docs/profiles.md, docs/dashboard.md): the account's browser profiles (name,
 * domains, counts, last use; never a cookie or a stored value), a form to add one from a Playwright
 * state file (validated like `POST /v1/profiles`; the file's text is never echoed back) and a delete
 * per profile. Calls {@link ProfilesService} as the REST API does.
 */
@ApiExcludeController()
@Controller('dashboard/profiles')
@UseGuards(DashboardAuthGuard)
@UseFilters(DashboardExceptionFilter)
export class DashboardProfilesController {
  constructor(
    private readonly profiles: ProfilesService,
    private readonly views: DashboardViews,
  ) {}

  @Get()
  async list(@Req() req: DashboardRequest, @Res() res: Response): Promise<void> {
    await this.render(req, res, 200, {});
  }

  @Post()
  async add(@Req() req: DashboardRequest, @Res() res: Response, @Body() form: Record<string, unknown>): Promise<void> {
    const echo = { name: String(form.name ?? ''), allowedDomains: String(form.allowedDomains ?? '') };
    const stateText = String(form.storageState ?? '').trim();
    let storageState: unknown;
    if (stateText) {
      try {
        storageState = JSON.parse(stateText);
      } catch {
        return this.render(req, res, 400, {
          error: 'The state file is not JSON: use the file Playwright’s storageState() writes.',
          form: echo,
        });
      }
    }
    const dto = plainToInstance(CreateProfileDto, {
      name: echo.name.trim(),
      allowedDomains: echo.allowedDomains.split(/[\s,]+/).filter(Boolean),
      ...(storageState !== undefined ? { storageState } : {}),
    });
    const result = await validatedFormAction(dto, () => this.profiles.create({ accountId: user(req).accountId }, dto));
    if (!result.ok) return this.render(req, res, result.status ?? 400, { error: result.error, form: echo });
    await this.render(req, res, 201, { added: result.value });
  }

  @Post(':id/delete')
  async remove(@Req() req: DashboardRequest, @Res() res: Response, @Param('id') id: string): Promise<void> {
    await notFoundAsPage(() => this.profiles.remove({ accountId: user(req).accountId }, id));
    res.redirect(303, '/dashboard/profiles');
  }

  private async render(req: DashboardRequest, res: Response, status: number, extra: Record<string, unknown>): Promise<void> {
    const { data } = await this.profiles.list({ accountId: user(req).accountId }, { limit: PAGE_SIZE });
    this.views.send(
      res,
      status,
      'profiles',
      page(req, 'profiles', 'Profiles', { profiles: data, added: null, error: null, form: {}, ...extra }),
    );
  }
}
