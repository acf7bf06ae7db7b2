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
}

const VERIFIED = Symbol('verifiedRenderLink');

/** The link {@link RenderLinkGuard} verified for this request. */
export function verifiedRenderLinkOf(req: Request): VerifiedRenderLink {
  const link = (req as Request & { [VERIFIED]?: VerifiedRenderLink })[VERIFIED];
  if (!link) throw new Error('verifiedRenderLinkOf used on a route without RenderLinkGuard');
  return link;
}

/**
 * Verifies the render link `target` (the request target: path and query) at `nowMs` (CONTRACT.md,
 * "Render links"): 414 `URI_TOO_LONG` over {@link RENDER_LINK_MAX_LENGTH}; 404 `NOT_FOUND` for a path
 * that is not `/v1/render/{renderKeyId}.{png|jpeg|webp|pdf}`; 401 `INVALID_SIGNATURE` (one answer for
 * each cause) when the signature is missing or wrong, the render key unknown, malformed or deleted, or
 * its API key revoked (the key lookup, {@link RenderKeysService.verifier}, sees a revocation at the next
 * request). Once the signature checked out, `onCaller` receives the render key's API key (so the errors
 * after it carry its operational headers): then 403 `RENDER_LINK_EXPIRED` when `expires` is past and
 * 400 `VALIDATION_FAILED` for a malformed `expires`. The signature is compared in constant time with
 * each secret that signs (the previous one during a rotation's overlap). Used by
 * {@link RenderLinkGuard} and by the hit route (`RenderHitRoute`).
 */
export async function verifyRenderLink(
  target: string,
  renderKeys: RenderKeysService,
  nowMs: number,
  onCaller: (caller: AuthenticatedKey) => void,
): Promise<VerifiedRenderLink> {
  if (target.length > RENDER_LINK_MAX_LENGTH) {
    throw new ApiError(ErrorCode.URI_TOO_LONG, 414, `A render link may be at most ${RENDER_LINK_MAX_LENGTH} characters long`);
  }
  const invalid = () => new ApiError(ErrorCode.INVALID_SIGNATURE, 401, 'The render link is not signed by a valid render key');
  const queryStart = target.indexOf('?');
  const path = queryStart < 0 ? target : target.slice(0, queryStart);
  const match = /^\/v1\/render\/(rk_[0-9A-Za-z]+)\.([a-z]+)$/.exec(path);
  if (!match || !(RENDER_FORMATS as readonly string[]).includes(match[2])) throw ApiError.notFound('Render link');
  const params = parseRawQuery(queryStart < 0 ? '' : target.slice(queryStart + 1));
  const signatures = params?.filter(([name]) => name === 'signature') ?? [];
  if (!params || signatures.length !== 1) throw invalid();
  const verifier = await renderKeys.verifier(match[1]);
  if (!verifier) throw invalid();
  const canonical = canonicalQuery(params);
  const given = signatures[0][1];
  // Every secret is compared, so the time taken does not tell which one (if any) matched.
  const matches = verifier.secrets.map((secret) => signaturesMatch(given, renderSignature(secret, path, canonical)));
  if (!matches.includes(true)) throw invalid();
  onCaller(verifier.caller);

  const expires = params.filter(([name]) => name === 'expires');
  if (expires.length > 1 || (expires.length === 1 && !/^\d{1,12}$/.test(expires[0][1]))) {
    throw ApiError.validation([{ field: 'expires', message: 'expires must be Unix seconds, given once' }]);
  }
  if (expires.length === 1 && Number(expires[0][1]) * 1000 <= nowMs) {
    throw new ApiError(ErrorCode.RENDER_LINK_EXPIRED, 403, 'This render link has expired');
  }
  return {
    renderKeyId: verifier.id,
    format: match[2] as RenderFormat,
    params: params.filter(([name]) => name !== 'signature' && name !== 'expires'),
    allowedHosts: verifier.allowedHosts,
  };
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
