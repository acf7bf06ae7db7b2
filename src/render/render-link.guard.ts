import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { setAuthenticatedKey } from '../auth/api-key.guard';
import type { AuthenticatedKey } from '../auth/api-keys.service';
import { ApiError, ErrorCode } from '../common/api-error';
import { Clock } from '../common/clock';
import { RENDER_FORMATS, RenderFormat } from './dto/render-link.dto';
import { RenderKeysService } from './render-keys.service';
import { canonicalQuery, parseRawQuery, renderSignature, signaturesMatch } from './render-signature';

/** Longest render link accepted, characters of the request target (CONTRACT.md, "Render links"). */
export const RENDER_LINK_MAX_LENGTH = 8192;

/** A render link whose signature checked out: what the route renders. */
export interface VerifiedRenderLink {
  renderKeyId: string;
  format: RenderFormat;
  /** The decoded query parameters except `signature` and `expires`. */
  params: [string, string][];
  allowedHosts: string[];
  /** When the link stops being valid (its `expires`, ms since the epoch), or Infinity. */
  expiresAtMs: number;
}

/** A render link's request target as parsed, before its key is looked up. */
export interface ParsedRenderLink {
  /** `/v1/render/{renderKeyId}.{ext}`. */
  path: string;
  renderKeyId: string;
  format: RenderFormat;
  /** The decoded query parameters, `signature` included. */
  params: [string, string][];
  /** The one `signature` given. */
  signature: string;
}

const VERIFIED = Symbol('verifiedRenderLink');

/** The link {@link RenderLinkGuard} verified for this request. */
export function verifiedRenderLinkOf(req: Request): VerifiedRenderLink {
  const link = (req as Request & { [VERIFIED]?: VerifiedRenderLink })[VERIFIED];
  if (!link) throw new Error('verifiedRenderLinkOf used on a route without RenderLinkGuard');
  return link;
}

/** 401 `INVALID_SIGNATURE`: one answer for every cause (CONTRACT.md, "Render links"). */
function invalidSignature(): ApiError {
  return new ApiError(ErrorCode.INVALID_SIGNATURE, 401, 'The render link is not signed by a valid render key');
}

/**
 * The render link `target` (the request target: path and query) parsed: 414 `URI_TOO_LONG` over
 * {@link RENDER_LINK_MAX_LENGTH}; 404 `NOT_FOUND` for a path that is not
 * `/v1/render/{renderKeyId}.{png|jpeg|webp|pdf|mp4|webm|gif}`; 401 `INVALID_SIGNATURE` for a malformed
 * escape or a `signature` missing or given twice.
 */
export function parseRenderLink(target: string): ParsedRenderLink {
  if (target.length > RENDER_LINK_MAX_LENGTH) {
    throw new ApiError(ErrorCode.URI_TOO_LONG, 414, `A render link may be at most ${RENDER_LINK_MAX_LENGTH} characters long`);
  }
  const queryStart = target.indexOf('?');
  const path = queryStart < 0 ? target : target.slice(0, queryStart);
  const match = /^\/v1\/render\/(rk_[0-9A-Za-z]+)\.([a-z]+)$/.exec(path);
  if (!match || !(RENDER_FORMATS as readonly string[]).includes(match[2])) throw ApiError.notFound('Render link');
  const params = parseRawQuery(queryStart < 0 ? '' : target.slice(queryStart + 1));
  const signatures = params?.filter(([name]) => name === 'signature') ?? [];
  if (!params || signatures.length !== 1) throw invalidSignature();
  return { path, renderKeyId: match[1], format: match[2] as RenderFormat, params, signature: signatures[0][1] };
}

/**
 * The index in `secrets` of the secret that signed `link`, or -1 when none did. Every secret is
 * compared, in constant time, so the time taken does not tell which one (if any) matched.
 */
export function signingSecretIndex(link: ParsedRenderLink, secrets: readonly string[]): number {
  const canonical = canonicalQuery(link.params);
  const matches = secrets.map((secret) => signaturesMatch(link.signature, renderSignature(secret, link.path, canonical)));
  return matches.indexOf(true);
}

/**
 * The verified link of `link`, whose signature checked out with render key `renderKeyId`
 * (`allowedHosts` its hosts), at `nowMs`: 400 `VALIDATION_FAILED` for a malformed `expires` and 403
 * `RENDER_LINK_EXPIRED` when it is past.
 */
export function verifiedLink(link: ParsedRenderLink, renderKeyId: string, allowedHosts: string[], nowMs: number): VerifiedRenderLink {
  const expires = link.params.filter(([name]) => name === 'expires');
  if (expires.length > 1 || (expires.length === 1 && !/^\d{1,12}$/.test(expires[0][1]))) {
    throw ApiError.validation([{ field: 'expires', message: 'expires must be Unix seconds, given once' }]);
  }
  const expiresAtMs = expires.length === 1 ? Number(expires[0][1]) * 1000 : Number.POSITIVE_INFINITY;
  if (expiresAtMs <= nowMs) throw new ApiError(ErrorCode.RENDER_LINK_EXPIRED, 403, 'This render link has expired');
  return {
    renderKeyId,
    format: link.format,
    params: link.params.filter(([name]) => name !== 'signature' && name !== 'expires'),
    allowedHosts,
    expiresAtMs,
  };
}

/**
 * Verifies the render link `target` (the request target: path and query) at `nowMs` (CONTRACT.md,
 * "Render links"): the errors of {@link parseRenderLink}; 401 `INVALID_SIGNATURE` (one answer for
 * each cause) when the signature is wrong, the render key unknown, malformed or deleted, or its API
 * key revoked (the key lookup, {@link RenderKeysService.verifier}, sees a revocation at the next
 * request). Once the signature checked out ({@link signingSecretIndex}: each secret that signs, the
 * previous one during a rotation's overlap), `onCaller` receives the render key's API key (so the
 * errors after it carry its operational headers): then the errors of {@link verifiedLink}. Used by
 * {@link RenderLinkGuard}; the hit route (`RenderHitRoute`) composes the same steps on a cached key.
 */
export async function verifyRenderLink(
  target: string,
  renderKeys: RenderKeysService,
  nowMs: number,
  onCaller: (caller: AuthenticatedKey) => void,
): Promise<VerifiedRenderLink> {
  const link = parseRenderLink(target);
  const verifier = await renderKeys.verifier(link.renderKeyId);
  if (!verifier || signingSecretIndex(link, verifier.secrets) < 0) throw invalidSignature();
  onCaller(verifier.caller);
  return verifiedLink(link, verifier.id, verifier.allowedHosts, nowMs);
}

/**
 * Guard of `GET|HEAD /v1/render/{renderKeyId}.{ext}`: {@link verifyRenderLink} on the request, with
 * the render key's API key attached to the request (its operational headers) once the signature
 * checked out.
 */
@Injectable()
export class RenderLinkGuard implements CanActivate {
  constructor(
    private readonly renderKeys: RenderKeysService,
    private readonly clock: Clock,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<Request>();
    const link = await verifyRenderLink(req.originalUrl, this.renderKeys, this.clock.now().getTime(), (caller) =>
      setAuthenticatedKey(req, caller),
    );
    (req as Request & { [VERIFIED]?: VerifiedRenderLink })[VERIFIED] = link;
    return true;
  }
}
