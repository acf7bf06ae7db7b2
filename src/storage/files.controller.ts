import { Controller, Get, Param, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { pipeline } from 'node:stream/promises';
import { ApiError, ErrorCode } from '../common/api-error';
import { Clock } from '../common/clock';
import { ResultFilesService } from './result-files.service';
import { conditionalAnswer } from './http-caching';

/**
 * Serves result files at their capability URLs, without an API key (CONTRACT.md, "Result files"):
 * `Content-Type`, `Content-Length`, `ETag`, `Cache-Control: private, max-age=<s until expiry>`,
 * `nosniff`, a sandboxing CSP; `If-None-Match` (304) and single `Range`s (206, 416); streamed from
 * the store for both drivers.
 */
@ApiExcludeController()
@Controller('files')
export class FilesController {
  constructor(
    private readonly files: ResultFilesService,
    private readonly clock: Clock,
  ) {}

  @Get(':name')
  async get(@Param('name') name: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    const file = await this.files.describe(name);
    if (!file) throw new ApiError(ErrorCode.NOT_FOUND, 404, 'File not found or expired');
    const maxAgeS = Math.max(0, Math.floor((file.expiresAt.getTime() - this.clock.now().getTime()) / 1000));
    res.setHeader('Content-Type', file.contentType);
    res.setHeader('ETag', file.etag);
    res.setHeader('Last-Modified', file.storedAt.toUTCString());
    res.setHeader('Cache-Control', `private, max-age=${maxAgeS}`);
    res.setHeader('Accept-Ranges', 'bytes');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Content-Security-Policy', "default-src 'none'; sandbox");

    const answer = conditionalAnswer(req.headers, file.size, file.etag);
    res.status(answer.status);
    if (answer.status === 304) {
      res.end();
      return;
    }
    if (answer.status === 416) {
      res.setHeader('Content-Range', `bytes */${file.size}`);
      res.setHeader('Content-Length', '0');
      res.end();
      return;
    }
    const range = answer.status === 206 ? answer.range : undefined;
    if (range) res.setHeader('Content-Range', `bytes ${range.start}-${range.end}/${file.size}`);
    res.setHeader('Content-Length', String(range ? range.end - range.start + 1 : file.size));
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    const body = await this.files.stream(file, range);
    // A broken store or a client that went away ends the response; nothing more can be sent.
    await pipeline(body, res).catch(() => res.destroy());
  }
}
