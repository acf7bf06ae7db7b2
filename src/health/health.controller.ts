import { Controller, Get, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { HealthService } from './health.service';

/** `GET /health` and `GET /ready`: no API key, outside `/v1`, not in the OpenAPI document (ops endpoints). */
@ApiExcludeController()
@Controller()
export class HealthController {
  constructor(private readonly health: HealthService) {}

  @Get('health')
  liveness(@Res() res: Response): void {
    const answer = this.health.liveness();
    res.status(answer.status).setHeader('Cache-Control', 'no-store').json(answer.body);
  }

  @Get('ready')
  async readiness(@Res() res: Response): Promise<void> {
    const answer = await this.health.readiness();
    res.status(answer.status).setHeader('Cache-Control', 'no-store').json(answer.body);
  }
}
