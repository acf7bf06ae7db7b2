import { Controller, Get, Head, Req, Res, StreamableFile, UseGuards } from '@nestjs/common';
import { ApiExcludeEndpoint, ApiHeader, ApiOperation, ApiParam, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { authenticatedKeyOf } from '../auth/api-key.guard';
import { ApiErrorResponses } from '../common/api-error-responses.decorator';
import { AUTHENTICATED_RESPONSE_HEADERS } from '../common/operational-headers';
import { conditionalAnswer } from '../storage/http-caching';
import { ResultFilesService } from '../storage/result-files.service';
import { RENDER_FORMATS } from './dto/render-link.dto';
import { RenderLinkGuard, verifiedRenderLinkOf } from './render-link.guard';
import { RenderedFile, RenderLinksService } from './render-links.service';

const FILE_HEADERS = {
  ...AUTHENTICATED_RESPONSE_HEADERS,
  'X-Glimpse-Cache': {
    description: '`HIT` (served from the capture cache, nothing counted) or `MISS` (rendered for this link)',
    schema: { type: 'string', enum: ['HIT', 'MISS'] },
  },
  'X-Glimpse-Job-Id': { description: 'The screenshot job whose file this is (`GET /v1/screenshot/{id}`)', schema: { type: 'string' } },
};
const BINARY = { schema: { type: 'string', format: 'binary' }, example: "(the file's bytes)" };

/**
 * `GET` and `HEAD /v1/render/{renderKeyId}.{ext}` (CONTRACT.md, "Render links"): a signed URL that
 * answers with the image itself, without an API key.
 */
@ApiTags('render')
@Controller('v1/render')
@UseGuards(RenderLinkGuard)
export class RenderLinksController {
  constructor(
    private readonly renderLinks: RenderLinksService,
    private readonly files: ResultFilesService,
  ) {}

  @Get(':file')
  @ApiOperation({
    operationId: 'getRenderLink',
    security: [],
    summary: 'Render link: the image itself',
    description:
      "A signed URL for `<img src>`, `og:image`, e-mails and chat unfurls. `signature` is the lowercase hex HMAC-SHA256, keyed with the render key's " +
      'secret, over `GET\\n/v1/render/{renderKeyId}.{ext}\\n{canonical query}` (every parameter but `signature`, RFC 3986-encoded, sorted by name then ' +
      'value, joined with `&`). The options are those of `POST /v1/screenshot` except `format`, `cache` and `extract` (400 `VALIDATION_FAILED` naming the parameter); object and array options are JSON text. ' +
      'Answers from the capture cache (fresh for `cacheTtl` seconds, default 86,400; nothing counted), else renders once for all identical links ' +
      '(one job, one unit of quota) and waits up to `RENDER_WAIT_MS`. `HEAD` answers the same headers without a body (a miss starts the render).',
  })
  @ApiParam({
    name: 'file',
    description: '`{renderKeyId}.{ext}`, ext one of png, jpeg, webp, pdf',
    example: 'rk_4fQx9LmZ2pRt7YvB1nKc3sDw.png',
  })
  @ApiQuery({ name: 'url', required: true, description: 'Page to capture', schema: { type: 'string' } })
  @ApiQuery({ name: 'expires', required: false, description: 'Unix seconds after which the link is refused', schema: { type: 'integer' } })
  @ApiQuery({
    name: 'signature',
    required: true,
    description: 'Lowercase hex HMAC-SHA256 (see above)',
    schema: { type: 'string', pattern: '^[0-9a-f]{64}$' },
  })
  @ApiHeader({ name: 'If-None-Match', required: false, description: 'An `ETag` of an earlier answer: 304 when it still matches' })
  @ApiResponse({
    status: 200,
    description:
      'The file, with a strong `ETag` of its bytes and `Cache-Control: public, max-age=<seconds the capture stays fresh>` ' +
      '(both standard headers, not listed below); a 503 `RENDER_PENDING` carries `Cache-Control: no-store`',
    headers: FILE_HEADERS,
    content: Object.fromEntries(RENDER_FORMATS.map((f) => [f === 'pdf' ? 'application/pdf' : `image/${f}`, BINARY])),
  })
  @ApiResponse({ status: 304, description: 'The `If-None-Match` entity tag still matches', headers: FILE_HEADERS })
  @ApiErrorResponses(
    { status: 400, codes: ['VALIDATION_FAILED', 'TARGET_NOT_ALLOWED', 'PROFILE_DOMAIN_NOT_ALLOWED'] },
    {
      status: 401,
      codes: ['INVALID_SIGNATURE'],
      description: 'Signature missing or wrong, render key unknown or deleted, or its API key revoked',
    },
    {
      status: 403,
      codes: ['RENDER_LINK_EXPIRED', 'HOST_NOT_ALLOWED'],
      description: "The link expired, or its host is outside the render key's allowedHosts",
    },
    {
      status: 404,
      codes: ['NOT_FOUND'],
      description: "Not a render link path (`{renderKeyId}.{png|jpeg|webp|pdf}`), or a `profile` that is not the render key's account's",
    },
    414,
    { status: 422, codes: ['CAPTURE_FAILED'], description: 'The capture failed (answered again for 60 s without a new job)' },
    429,
    500,
    {
      status: 503,
      codes: ['RENDER_PENDING', 'SERVICE_UNAVAILABLE'],
      description: 'Still rendering after RENDER_WAIT_MS (retry after `Retry-After`), or PostgreSQL unreachable',
    },
  )
  get(@Req() req: Request, @Res({ passthrough: true }) res: Response): Promise<StreamableFile | undefined> {
    return this.answer(req, res, true);
  }

  @Head(':file')
  @ApiExcludeEndpoint()
  head(@Req() req: Request, @Res({ passthrough: true }) res: Response): Promise<StreamableFile | undefined> {
    return this.answer(req, res, false);
  }

  private async answer(req: Request, res: Response, withBody: boolean): Promise<StreamableFile | undefined> {
    const rendered = await this.renderLinks.render(authenticatedKeyOf(req)!, verifiedRenderLinkOf(req));
    setFileHeaders(res, rendered);
    if (conditionalAnswer({ 'if-none-match': req.headers['if-none-match'] }, rendered.file.size, rendered.file.etag).status === 304) {
      res.status(304);
      return undefined;
    }
    res.setHeader('Content-Type', rendered.file.contentType);
    res.setHeader('Content-Length', String(rendered.file.size));
    if (!withBody) return undefined;
    const options = { type: rendered.file.contentType, length: rendered.file.size };
    if (rendered.data) return new StreamableFile(rendered.data, options);
    return new StreamableFile(await this.files.stream(rendered.file), options);
  }
}

function setFileHeaders(res: Response, rendered: RenderedFile): void {
  res.setHeader('ETag', rendered.file.etag);
  res.setHeader('Cache-Control', `public, max-age=${rendered.freshS}`);
  res.setHeader('X-Glimpse-Cache', rendered.cache);
  res.setHeader('X-Glimpse-Job-Id', rendered.jobId);
}
