import { Controller, Get, Param, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiError, ErrorCode } from '../common/api-error';
import { ResultFilesService } from './result-files.service';

/** Serves result files at their capability URLs, without an API key. */
@ApiExcludeController()
@Controller('files')
export class FilesController {
  constructor(private readonly files: ResultFilesService) {}

  @Get(':name')
  async get(@Param('name') name: string, @Res() res: Response): Promise<void> {
    const file = await this.files.open(name);
    if (!file) throw new ApiError(ErrorCode.NOT_FOUND, 404, 'File not found or expired');
    res.setHeader('Content-Type', file.contentType);
    res.setHeader('Cache-Control', 'private, max-age=86400, immutable');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.send(file.data);
  }
}
