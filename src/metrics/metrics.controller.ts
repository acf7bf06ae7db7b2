import { Controller, Get, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { MetricsEndpoint } from './metrics-endpoint';

/**
 * `GET /metrics` (Prometheus text) on the API's port, outside `/v1`, behind `METRICS_TOKEN` when set;
 * 404 with `NODE_ENV=production` and no token (then scrape `METRICS_PORT`).
 */
@ApiExcludeController()
@Controller('metrics')
export class MetricsController {
  constructor(private readonly endpoint: MetricsEndpoint) {}

  @Get()
  async get(@Req() req: Request, @Res() res: Response): Promise<void> {
    const answer = await this.endpoint.scrape(req.headers.authorization, 'public');
    res.status(answer.status).setHeader('Content-Type', answer.contentType);
    if (answer.status === 401) res.setHeader('WWW-Authenticate', 'Bearer realm="metrics"');
    res.setHeader('Cache-Control', 'no-store').send(answer.body);
  }
}
