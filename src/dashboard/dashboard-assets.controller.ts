import { Controller, Get, Param, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { dirname, join } from 'node:path';
import { DashboardAuthGuard, PublicPage } from './dashboard-auth.guard';
import { DashboardExceptionFilter } from './dashboard-exception.filter';
import { DashboardError } from './dashboard-request';

/**
 * The dashboard's static files, by name only (no paths from the request): htmx 2 and Chart.js from
 * `node_modules` (no front-end build), and the dashboard's own script and stylesheet
 * (`src/dashboard/assets`, copied next to the compiled module by `npm run build`).
 */
export const DASHBOARD_ASSETS: Record<string, { file: string; type: string }> = {
  'htmx.min.js': { file: require.resolve('htmx.org/dist/htmx.min.js'), type: 'text/javascript' },
  'chart.umd.min.js': { file: join(dirname(require.resolve('chart.js')), 'chart.umd.min.js'), type: 'text/javascript' },
  'dashboard.js': { file: join(__dirname, 'assets', 'dashboard.js'), type: 'text/javascript' },
  'dashboard.css': { file: join(__dirname, 'assets', 'dashboard.css'), type: 'text/css' },
};

@ApiExcludeController()
@Controller('dashboard/assets')
@UseGuards(DashboardAuthGuard)
@UseFilters(DashboardExceptionFilter)
export class DashboardAssetsController {
  /** Serves one asset with a one-hour cache. */
  @PublicPage()
  @Get(':name')
  asset(@Param('name') name: string, @Res() res: Response): void {
    const asset = Object.hasOwn(DASHBOARD_ASSETS, name) ? DASHBOARD_ASSETS[name] : undefined;
    if (!asset) throw DashboardError.notFound();
    res.setHeader('Cache-Control', 'public, max-age=3600');
    res.type(asset.type).sendFile(asset.file);
  }
}
