import { Body, Controller, Get, Param, Post, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { CAPTURE_LIMITS } from '../capture/capture-options';
import { EXTRACT_KINDS, MARKDOWN_MODES } from '../results/extracted';
import { JOB_FORMATS } from '../results/result-formats';
import { DashboardAuthGuard } from './dashboard-auth.guard';
import { DashboardExceptionFilter } from './dashboard-exception.filter';
import { DashboardPlaygroundService, PlaygroundResult } from './dashboard-playground.service';
import { DashboardRequest } from './dashboard-request';
import { SignedIn } from './dashboard-sessions.service';
import { DashboardViews } from './dashboard-views';
import { DashboardService } from './dashboard.service';

type Form = Record<string, unknown>;

/** The form of a fresh playground page: a 1280×800 PNG with the markdown, the metadata and the links. */
const DEFAULT_FORM: Form = { extract: ['markdown', 'metadata', 'links'], markdownMode: 'readable' };

/**
 * The Playground page (docs/dashboard.md, "Playground"): a capture form with the options that show
 * what a capture gives, and its result (the image beside the extracted markdown, the metadata as a
 * table, the links). The POST answers once the job ended (waiting on the server, up to
 * `PLAYGROUND_WAIT_MS`); a job still running is shown as a card that asks for itself again (htmx).
 */
@ApiExcludeController()
@Controller('dashboard/playground')
@UseGuards(DashboardAuthGuard)
@UseFilters(DashboardExceptionFilter)
export class DashboardPlaygroundController {
  constructor(
    private readonly playground: DashboardPlaygroundService,
    private readonly dashboard: DashboardService,
    private readonly views: DashboardViews,
  ) {}

  @Get()
  async form(@Req() req: DashboardRequest, @Res() res: Response): Promise<void> {
    await this.render(req, res, 200, { form: DEFAULT_FORM, error: null, result: null });
  }

  @Post()
  async capture(@Req() req: DashboardRequest, @Res() res: Response, @Body() form: Form): Promise<void> {
    const accepted = await this.playground.submit(signedIn(req).user, form);
    if (!accepted.ok) return this.render(req, res, accepted.status ?? 400, { form, error: accepted.error, result: null });
    const result = await this.playground.result(signedIn(req).user, accepted.value.id);
    await this.render(req, res, result.busy ? 202 : 200, { form, error: null, result });
  }

  @Get('jobs/:id')
  async job(@Req() req: DashboardRequest, @Res() res: Response, @Param('id') id: string): Promise<void> {
    const result = await this.playground.result(signedIn(req).user, id);
    // The result card's own request for itself gets the card; a boosted link (also htmx) gets the page.
    if (req.headers['hx-request'] && !req.headers['hx-boosted']) return this.views.send(res, 200, 'partials/playground-result', { result });
    // The form shows the job's own options (the target URL and the key are not part of them).
    const form = { markdownMode: DEFAULT_FORM.markdownMode, ...result.job.options, extract: result.job.options.extract ?? [] };
    await this.render(req, res, 200, { form, error: null, result });
  }

  private async render(
    req: DashboardRequest,
    res: Response,
    status: number,
    data: { form: Form; error: string | null; result: PlaygroundResult | null },
  ): Promise<void> {
    const keys = (await this.dashboard.keys(signedIn(req).user)).filter((k) => !k.revokedAt);
    this.views.send(res, status, 'playground', {
      signedIn: req.dashboard.signedIn,
      csrfToken: req.dashboard.csrfToken,
      active: 'playground',
      title: 'Playground',
      keys,
      choices: { formats: JOB_FORMATS, extractKinds: EXTRACT_KINDS, markdownModes: MARKDOWN_MODES, limits: CAPTURE_LIMITS },
      ...data,
    });
  }
}

function signedIn(req: DashboardRequest): SignedIn {
  return req.dashboard.signedIn as SignedIn;
}
