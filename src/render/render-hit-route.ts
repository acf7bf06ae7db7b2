import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream';
import type { AuthenticatedKey } from '../auth/api-keys.service';
import { Clock } from '../common/clock';
import { HEADER } from '../common/operational-headers';
import { requestIdOf } from '../common/request-context';
import { Metrics } from '../metrics/metrics';
import { QuotaService } from '../quota/quota.service';
import { rateLimitHeaders } from '../quota/rate-limit-headers';
import { RequestRateLimiter } from '../quota/request-rate-limiter';
import { conditionalAnswer } from '../storage/http-caching';
import { ResultFileInfo, ResultFilesService } from '../storage/result-files.service';
import { RenderKeysService } from './render-keys.service';
import { verifyRenderLink } from './render-link.guard';
import { RenderedFile, RenderLinksService } from './render-links.service';

/** The route template of render links, as the HTTP metrics label it. */
const RENDER_ROUTE = '/v1/render/:file';

/**
 * The hit route of render links (docs/render-links.md#performance): a request handler in front of
 * Express and the Nest pipeline (Express's router, request log context, access line, body parsing,
 * guards, interceptors; `configureApp` installs it) that answers
 * `GET`/`HEAD /v1/render/{renderKeyId}.{ext}` itself when the link verifies
 * ({@link verifyRenderLink}: the signature, the render key and its API key looked up as on the full
 * route, so a revocation or deletion is refused at the next request) and its capture was found in
 * the last few seconds and is still fresh ({@link RenderLinksService.recentHit}). Its answer is the
 * full route's (CONTRACT.md, "Render links"): `X-Request-ID`, the API key's `X-RateLimit-*`, a strong
 * `ETag`, `Cache-Control: public, max-age=…`, `X-Glimpse-Cache: HIT`, `X-Glimpse-Job-Id`, 304 for a
 * matching `If-None-Match`, the file from memory when small, else streamed from storage. It counts
 * the request in the HTTP metrics but writes no access line.
 *
 * Every other request goes on to Express (`next`) unchanged, and the full route answers it as before:
 * a miss, an invalid, expired or refused link (its error envelope), a link with `profile`, a request
 * with `X-Organization-ID` (checked there), any failure here, and every request while
 * `RATE_LIMIT_PER_SECOND` is set (the per-key rate counts render links too).
 */
@Injectable()
export class RenderHitRoute {
  /** The headers of a file that never change, built once per file. */
  private readonly fileHeaders = new WeakMap<ResultFileInfo, Record<string, string>>();

  constructor(
    private readonly renderLinks: RenderLinksService,
    private readonly renderKeys: RenderKeysService,
    private readonly quota: QuotaService,
    private readonly limiter: RequestRateLimiter,
    private readonly files: ResultFilesService,
    private readonly metrics: Metrics,
    private readonly clock: Clock,
  ) {}

  /** Answers `req` when it is a fresh hit, else calls `next` (having written nothing). */
  readonly handle = (req: IncomingMessage, res: ServerResponse, next: () => void): void => {
    if (
      (req.method !== 'GET' && req.method !== 'HEAD') ||
      !req.url?.startsWith('/v1/render/') ||
      req.headers['x-organization-id'] !== undefined ||
      this.limiter.enabled
    ) {
      next();
      return;
    }
    const startedAt = process.hrtime.bigint();
    this.answer(req, res).then(
      (status) => {
        if (status === null) return next();
        const seconds = Number(process.hrtime.bigint() - startedAt) / 1e9;
        this.metrics.httpRequests.inc({ method: req.method, route: RENDER_ROUTE, status: String(status) });
        this.metrics.httpRequestDuration.observe({ method: req.method, route: RENDER_ROUTE }, seconds);
      },
      // Nothing was written: the full route answers (and reports) whatever failed here.
      () => next(),
    );
  };

  /** Answers a recent hit and resolves with its status, or resolves null having written nothing. */
  private async answer(req: IncomingMessage, res: ServerResponse): Promise<number | null> {
    let caller: AuthenticatedKey | undefined;
    const link = await verifyRenderLink(req.url as string, this.renderKeys, this.clock.now().getTime(), (c) => (caller = c));
    if (!caller) return null;
    const rendered = await this.renderLinks.recentHit(caller, link);
    if (!rendered) return null;
    const headers: Record<string, string> = {
      [HEADER.requestId]: requestIdOf(req as Request),
      ...rateLimitHeaders(await this.quota.statusFor(caller)),
      'Cache-Control': `public, max-age=${rendered.freshS}`,
      'X-Glimpse-Cache': rendered.cache,
      'X-Glimpse-Job-Id': rendered.jobId,
    };
    const file = this.headersOf(rendered);
    if (conditionalAnswer({ 'if-none-match': req.headers['if-none-match'] }, rendered.file.size, rendered.file.etag).status === 304) {
      res.writeHead(304, { ...headers, ETag: file.ETag });
      res.end();
      return 304;
    }
    if (req.method === 'HEAD' || rendered.data) {
      res.writeHead(200, { ...headers, ...file });
      res.end(req.method === 'HEAD' ? undefined : rendered.data);
      return 200;
    }
    const stream = await this.files.stream(rendered.file);
    res.writeHead(200, { ...headers, ...file });
    // A storage error mid-file can only cut the answer short (its length tells the client).
    pipeline(stream, res, () => undefined);
    return 200;
  }

  /** `ETag`, `Content-Type` and `Content-Length` of the file, built once per file. */
  private headersOf(rendered: RenderedFile): Record<string, string> {
    let headers = this.fileHeaders.get(rendered.file);
    if (!headers) {
      headers = { ETag: rendered.file.etag, 'Content-Type': rendered.file.contentType, 'Content-Length': String(rendered.file.size) };
      this.fileHeaders.set(rendered.file, headers);
    }
    return headers;
  }
}
