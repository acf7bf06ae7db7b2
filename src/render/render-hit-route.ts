import { Injectable } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream';
import { KeyCache } from '../accounts/key-cache';
import type { AuthenticatedKey } from '../auth/api-keys.service';
import { Clock } from '../common/clock';
import { HEADER } from '../common/operational-headers';
import { resolveRequestId } from '../common/request-id';
import { Metrics } from '../metrics/metrics';
import { QuotaService } from '../quota/quota.service';
import { rateLimitHeaders } from '../quota/rate-limit-headers';
import { RequestRateLimiter } from '../quota/request-rate-limiter';
import { conditionalAnswer } from '../storage/http-caching';
import { ResultFileInfo, ResultFilesService } from '../storage/result-files.service';
import { RecentCache } from './recent-cache';
import { CachedRenderKey, RenderKeysService, signingSecretsAt } from './render-keys.service';
import { parseRenderLink, signingSecretIndex, VerifiedRenderLink, verifiedLink } from './render-link.guard';
import { RenderedFile, RenderLinksService } from './render-links.service';

/** The route template of render links, as the HTTP metrics label it. */
const RENDER_ROUTE = '/v1/render/:file';
/** Most links whose verification is remembered, and the characters of their targets in all. */
const VERIFIED_LINKS_MAX = 2_000;
const VERIFIED_LINKS_MAX_CHARS = 4 * 1024 * 1024;

/** A link verified against one cached render key: valid while that key's cache entry is the same object, until `untilMs`. */
interface VerifiedTarget {
  key: CachedRenderKey;
  link: VerifiedRenderLink;
}

/** The `X-RateLimit-*` headers of a caller as a flat name, value list, valid until `untilMs` (the month's end). */
interface RateLimitList {
  list: string[];
  untilMs: number;
}

/** The HTTP metrics of one method and status, bound once. */
interface BoundMetrics {
  count: { inc(): void };
  duration: { observe(seconds: number): void };
}

/**
 * The hit route of render links (docs/render-links.md#performance): a request handler in front of
 * Express and the Nest pipeline (Express's router, request log context, access line, body parsing,
 * guards, interceptors; `configureApp` installs it) that answers
 * `GET`/`HEAD /v1/render/{renderKeyId}.{ext}` itself when the link verifies and its capture was found
 * in the last few seconds and is still fresh ({@link RenderLinksService.recentHit}).
 *
 * It waits for one thing, the auth version read ({@link KeyCache.version}, sent after the request
 * arrived, shared by the requests of one turn of the event loop); the rest is synchronous. The link is
 * verified as the full route's guard does ({@link parseRenderLink}, {@link signingSecretIndex},
 * {@link verifiedLink}) against the render key as cached under that version
 * ({@link RenderKeysService.cached}): a revocation, rotation or deletion changes the version, so it is
 * refused at the next request. A link that verified against a cached key is remembered with that key
 * until the key's entry is replaced, its `expires` passes or the secret that signed it stops signing.
 *
 * Its answer is the full route's (CONTRACT.md, "Render links"): `X-Request-ID`, the API key's
 * `X-RateLimit-*`, a strong `ETag`, `Cache-Control: public, max-age=…`, `X-Glimpse-Cache: HIT`,
 * `X-Glimpse-Job-Id`, 304 for a matching `If-None-Match`, the file from memory when small, else streamed
 * from storage. It counts the request in the HTTP metrics but writes no access line.
 *
 * Every other request goes on to Express (`next`) unchanged, and the full route answers it as before:
 * a miss, a key not cached (the full route loads it), an invalid, expired or refused link (its error
 * envelope), a link with `profile`, a request with `X-Organization-ID` (checked there), any failure
 * here, every request while Redis does not answer the version read, and every request while
 * `RATE_LIMIT_PER_SECOND` is set (the per-key rate counts render links too).
 */
@Injectable()
export class RenderHitRoute {
  /** The headers of a file that never change (`ETag`, `Content-Type`, `Content-Length`), built once per file. */
  private readonly fileHeaders = new WeakMap<ResultFileInfo, string[]>();
  /** Request targets whose signature checked out, by target. */
  private readonly verified = new RecentCache<VerifiedTarget>(VERIFIED_LINKS_MAX, VERIFIED_LINKS_MAX_CHARS);
  private readonly rateLimits = new WeakMap<AuthenticatedKey, RateLimitList>();
  private readonly boundMetrics = new Map<string, BoundMetrics>();

  constructor(
    private readonly renderLinks: RenderLinksService,
    private readonly renderKeys: RenderKeysService,
    private readonly keyCache: KeyCache,
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
    const startedAt = performance.now();
    // Nothing was written when it fails or declines: the full route answers (and reports) the request.
    const ended = (status: number | null) => (status === null ? next() : this.count(req.method as string, status, startedAt));
    this.keyCache.version().then((version) => {
      let status: number | null | Promise<number | null>;
      try {
        status = version === null ? null : this.answer(req, res, version);
      } catch {
        status = null;
      }
      if (status instanceof Promise) status.then(ended, () => next());
      else ended(status);
    }, next);
  };

  /**
   * Answers a fresh hit of the link in `req` under the auth `version`, and returns its status (a
   * promise of it when the file is streamed from storage), or returns null having written nothing.
   * Throws (having written nothing) what verifying the link throws.
   */
  private answer(req: IncomingMessage, res: ServerResponse, version: string): number | null | Promise<number | null> {
    const nowMs = this.clock.now().getTime();
    const verified = this.verifiedTarget(req.url as string, version, nowMs);
    if (!verified) return null;
    const caller = verified.key.caller;
    const rendered = this.renderLinks.recentHit(caller, verified.link, nowMs);
    if (!rendered) return null;
    const rateLimits = this.rateLimitList(caller, nowMs);
    if (!rateLimits) return null;
    const headers = [HEADER.requestId, resolveRequestId(req.headers['x-request-id'])].concat(
      rateLimits,
      'Cache-Control',
      `public, max-age=${rendered.freshS}`,
      'X-Glimpse-Cache',
      rendered.cache,
      'X-Glimpse-Job-Id',
      rendered.jobId,
    );
    const ifNoneMatch = req.headers['if-none-match'];
    if (ifNoneMatch && conditionalAnswer({ 'if-none-match': ifNoneMatch }, rendered.file.size, rendered.file.etag).status === 304) {
      headers.push('ETag', rendered.file.etag);
      res.writeHead(304, headers);
      res.end();
      return 304;
    }
    const fileHeaders = this.headersOf(rendered.file);
    for (const value of fileHeaders) headers.push(value);
    if (req.method === 'HEAD' || rendered.data) {
      res.writeHead(200, headers);
      res.end(req.method === 'HEAD' ? undefined : rendered.data);
      return 200;
    }
    return this.stream(res, rendered, headers);
  }

  /**
   * The link of request target `target` verified at `nowMs` against its render key as cached under
   * `version`, or null when that key is not cached (the full route loads it) or the signature does
   * not check out. Throws the other errors of verifying a link (the full route answers them).
   */
  private verifiedTarget(target: string, version: string, nowMs: number): VerifiedTarget | null {
    const known = this.verified.get(target, nowMs);
    if (known && this.renderKeys.cached(known.key.id, version) === known.key) return known;
    const link = parseRenderLink(target);
    const key = this.renderKeys.cached(link.renderKeyId, version);
    if (!key) return null;
    const secrets = signingSecretsAt(key, nowMs);
    const signedBy = signingSecretIndex(
      link,
      secrets.map((s) => s.secret),
    );
    if (signedBy < 0) return null;
    const verified = { key, link: verifiedLink(link, key.id, key.allowedHosts, nowMs) };
    this.verified.set(target, verified, Math.min(secrets[signedBy].untilMs, verified.link.expiresAtMs), target.length);
    return verified;
  }

  /** The caller's `X-RateLimit-*` headers as a flat list, built once per cached caller and month; null when they need a query. */
  private rateLimitList(caller: AuthenticatedKey, nowMs: number): string[] | null {
    const known = this.rateLimits.get(caller);
    if (known && known.untilMs > nowMs) return known.list;
    const status = this.quota.knownStatusFor(caller);
    if (!status) return null;
    const list = Object.entries(rateLimitHeaders(status)).flat();
    this.rateLimits.set(caller, { list, untilMs: status.resetAt.getTime() });
    return list;
  }

  /** Streams a file too large to be held in memory from storage, then resolves with 200; null (nothing written) when storage fails to open it. */
  private async stream(res: ServerResponse, rendered: RenderedFile, headers: string[]): Promise<number> {
    const stream = await this.files.stream(rendered.file);
    res.writeHead(200, headers);
    // A storage error mid-file can only cut the answer short (its length tells the client).
    pipeline(stream, res, () => undefined);
    return 200;
  }

  /** `ETag`, `Content-Type` and `Content-Length` of the file, as a flat name, value list built once per file. */
  private headersOf(file: ResultFileInfo): string[] {
    let headers = this.fileHeaders.get(file);
    if (!headers) {
      headers = ['ETag', file.etag, 'Content-Type', file.contentType, 'Content-Length', String(file.size)];
      this.fileHeaders.set(file, headers);
    }
    return headers;
  }

  /** Counts an answer in the HTTP metrics (docs/operations.md#metrics), their label sets bound once per method and status. */
  private count(method: string, status: number, startedAt: number): void {
    const labels = `${method} ${status}`;
    let bound = this.boundMetrics.get(labels);
    if (!bound) {
      bound = {
        count: this.metrics.httpRequests.labels({ method, route: RENDER_ROUTE, status: String(status) }),
        duration: this.metrics.httpRequestDuration.labels({ method, route: RENDER_ROUTE }),
      };
      this.boundMetrics.set(labels, bound);
    }
    bound.count.inc();
    bound.duration.observe((performance.now() - startedAt) / 1000);
  }
}
