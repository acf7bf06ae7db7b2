import express, { NextFunction, Request, Response } from 'express';
import { isUtf8 } from 'node:buffer';
import { MIMEType } from 'node:util';
import { ApiError, ErrorCode } from './api-error';
import { sendError } from './error-envelope';
import { requestIdOf } from './request-context';
import type { BodyParsingRoutes } from './body-parsing-routes';
import { bodyProblemError, findBodyProblem } from './request-body-rules';

/**
 * Largest JSON body accepted, in bytes: 1 MiB (CONTRACT.md, "Rate limits and back-pressure"; a batch
 * of 100 captures with scripts and style sheets fits, a screenshot request is well under 4 KiB).
 */
export const JSON_BODY_LIMIT_BYTES = 1024 * 1024;

/** body-parser error type of a JSON body that is not valid UTF-8 (thrown by the `verify` hook). */
export const INVALID_UTF8 = 'encoding.invalid-utf8';

/**
 * Express middleware chain for request bodies:
 * - 415 `UNSUPPORTED_MEDIA_TYPE` for a body that is neither JSON nor (on a `@MultipartBody()` route of
 *   `routes`) multipart, or whose `charset` is anything but `utf-8` (JSON is UTF-8, RFC 8259 section 8.1);
 * - JSON parsing limited to {@link JSON_BODY_LIMIT_BYTES} (413 `PAYLOAD_TOO_LARGE`); a body that is not
 *   JSON or not valid UTF-8 (never silently replaced) is 400 `INVALID_JSON`;
 * - the parsed body checked by {@link findBodyProblem}: nesting deeper than 32 is 400 `INVALID_JSON`,
 *   a reserved key (`__proto__`, `constructor`, `prototype`) or a NUL character anywhere is 400
 *   `VALIDATION_FAILED` naming the field, whatever the route does with its body.
 * Failures are envelopes, never Express's HTML error page. Paths of a `@ParsesOwnBody()` controller
 * are passed through unparsed. `routes`: from `bodyParsingRoutesOf(app)`.
 */
export function bodyParsingMiddleware(routes: BodyParsingRoutes) {
  const requireSupportedType = (req: Request, res: Response, next: NextFunction) => {
    if (!req.path.startsWith('/v1/') || !hasBody(req)) return next();
    const multipart = routes.isMultipart(req.path);
    const allowed = multipart ? 'multipart/form-data' : 'application/json';
    if (!req.is(allowed)) {
      return sendError(res, requestIdOf(req), new ApiError(ErrorCode.UNSUPPORTED_MEDIA_TYPE, 415, `Content-Type must be ${allowed}`));
    }
    const charset = charsetOf(req.headers['content-type']);
    if (!multipart && charset !== null && charset !== 'utf-8' && charset !== 'utf8') {
      return sendError(
        res,
        requestIdOf(req),
        new ApiError(ErrorCode.UNSUPPORTED_MEDIA_TYPE, 415, `Unsupported charset "${charset}": JSON bodies must be UTF-8`),
      );
    }
    next();
  };
  const checkParsedBody = (req: Request, res: Response, next: NextFunction) => {
    if (!req.path.startsWith('/v1/') || req.body === undefined) return next();
    const problem = findBodyProblem(req.body);
    if (problem) return sendError(res, requestIdOf(req), bodyProblemError(problem));
    next();
  };
  const renderParserError = (err: unknown, req: Request, res: Response, next: NextFunction) => {
    const type = (err as { type?: string }).type;
    if (type === 'entity.parse.failed') {
      return sendError(res, requestIdOf(req), new ApiError(ErrorCode.INVALID_JSON, 400, 'Request body is not valid JSON'));
    }
    if (type === INVALID_UTF8) {
      return sendError(res, requestIdOf(req), new ApiError(ErrorCode.INVALID_JSON, 400, 'Request body is not valid UTF-8'));
    }
    if (type === 'entity.too.large') {
      return sendError(
        res,
        requestIdOf(req),
        new ApiError(ErrorCode.PAYLOAD_TOO_LARGE, 413, `Request body exceeds ${JSON_BODY_LIMIT_BYTES} bytes`),
      );
    }
    if (type === 'encoding.unsupported' || type === 'charset.unsupported') {
      return sendError(res, requestIdOf(req), new ApiError(ErrorCode.UNSUPPORTED_MEDIA_TYPE, 415, 'Unsupported body encoding'));
    }
    // Any other client-side read failure (a body that does not inflate as its Content-Encoding says,
    // an aborted upload, a length that does not match): the body is unreadable, not a server fault.
    const status = (err as { status?: number }).status;
    if (status !== undefined && status >= 400 && status < 500) {
      return sendError(
        res,
        requestIdOf(req),
        new ApiError(ErrorCode.INVALID_JSON, 400, 'Request body could not be read (check Content-Encoding and Content-Length)'),
      );
    }
    next(err);
  };
  const parseJson = express.json({ limit: JSON_BODY_LIMIT_BYTES, verify: requireUtf8 });
  const parseJsonUnlessOwn = (req: Request, res: Response, next: NextFunction) =>
    routes.parsesOwnBody(req.path) ? next() : parseJson(req, res, next);
  return [requireSupportedType, parseJsonUnlessOwn, renderParserError, checkParsedBody];
}

/** body-parser `verify` hook: refuses a body that is not valid UTF-8 (body-parser would replace the bytes). */
export function requireUtf8(_req: unknown, _res: unknown, body: Buffer): void {
  if (!isUtf8(body)) throw Object.assign(new Error('Request body is not valid UTF-8'), { status: 400, type: INVALID_UTF8 });
}

/** The lower-cased `charset` parameter of a Content-Type header, or null when absent or unparsable. */
function charsetOf(contentType: string | undefined): string | null {
  try {
    return new MIMEType(contentType ?? '').params.get('charset')?.toLowerCase() ?? null;
  } catch {
    return null;
  }
}

/**
 * Express middleware: a `/v1` path with a percent-encoding that does not decode (`%E0%A4%A`, a lone
 * `%`) is 404 `NOT_FOUND` (CONTRACT.md, "Identifiers": an id of the wrong shape is a 404), instead of
 * the router's 400 when it decodes the id.
 */
export function pathEncodingMiddleware(req: Request, res: Response, next: NextFunction): void {
  if (!req.path.startsWith('/v1/')) return next();
  try {
    decodeURIComponent(req.path);
  } catch {
    return sendError(res, requestIdOf(req), ApiError.notFound('Resource'));
  }
  next();
}

function hasBody(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}
