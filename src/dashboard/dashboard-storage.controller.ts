import { Body, Controller, Get, Param, Post, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { plainToInstance } from 'class-transformer';
import type { Response } from 'express';
import { CreateStorageDestinationDto } from '../storage-destinations/dto/storage-destination.dto';
import { StorageDestinationsService } from '../storage-destinations/storage-destinations.service';
import { DashboardAuthGuard } from './dashboard-auth.guard';
import { DashboardExceptionFilter } from './dashboard-exception.filter';
import { DashboardRequest, notFoundAsPage } from './dashboard-request';
import { page, user } from './dashboard-pages.controller';
import { DashboardViews } from './dashboard-views';
import { validatedFormAction } from './dashboard.service';

type Form = Record<string, unknown>;

/**
 * The Storage page (docs/storage-destinations.md): the account's storage destinations, a form to add
 * one (validated like `POST /v1/storage-destinations`), and per destination a test (writes and
 * deletes a small object; the outcome is shown on the page) and a delete. Credentials are never shown.
 */
@ApiExcludeController()
@Controller('dashboard/storage')
@UseGuards(DashboardAuthGuard)
@UseFilters(DashboardExceptionFilter)
export class DashboardStorageController {
  constructor(
    private readonly destinations: StorageDestinationsService,
    private readonly views: DashboardViews,
  ) {}

  @Get()
  async storage(@Req() req: DashboardRequest, @Res() res: Response): Promise<void> {
    await this.render(req, res, 200, {});
  }

  @Post()
  async add(@Req() req: DashboardRequest, @Res() res: Response, @Body() form: Form): Promise<void> {
    const text = (name: string) => String(form[name] ?? '').trim() || undefined;
    const dto = plainToInstance(CreateStorageDestinationDto, {
      type: 's3',
      bucket: text('bucket') ?? '',
      region: text('region'),
      endpoint: text('endpoint'),
      forcePathStyle: form.forcePathStyle === 'on' || form.forcePathStyle === 'true',
      accessKeyId: text('accessKeyId') ?? '',
      secretAccessKey: String(form.secretAccessKey ?? ''),
      prefix: text('prefix'),
      description: text('description'),
    });
    const result = await validatedFormAction(dto, () => this.destinations.create(user(req), dto));
    // The secret is never echoed back into the form.
    if (!result.ok)
      return this.render(req, res, result.status ?? 400, { error: result.error, form: { ...form, secretAccessKey: undefined } });
    await this.render(req, res, 201, { added: result.value.id });
  }

  @Post(':id/test')
  async test(@Req() req: DashboardRequest, @Res() res: Response, @Param('id') id: string): Promise<void> {
    const result = await notFoundAsPage(() => this.destinations.test(user(req), id));
    await this.render(req, res, 200, { tested: { id, ...result } });
  }

  @Post(':id/delete')
  async remove(@Req() req: DashboardRequest, @Res() res: Response, @Param('id') id: string): Promise<void> {
    await notFoundAsPage(() => this.destinations.remove(user(req), id));
    res.redirect(303, '/dashboard/storage');
  }

  private async render(req: DashboardRequest, res: Response, status: number, extra: Record<string, unknown>): Promise<void> {
    const { data } = await this.destinations.list(user(req));
    this.views.send(
      res,
      status,
      'storage',
      page(req, 'storage', 'Storage', { destinations: data, added: null, tested: null, error: null, form: {}, ...extra }),
    );
  }
}
