import express, { NextFunction, Request, Response } from 'express';
import { ApiError, ErrorCode } from './api-error';
import { sendError } from './error-envelope';
import { requestIdOf } from './request-context';

/** Largest JSON body accepted, in bytes (a screenshot request is well under 4 KiB). */
export const JSON_BODY_LIMIT_BYTES = 100 * 1024;

/**
 * Paths whose routes parse their own bodies with their own limit and error format: the MCP endpoint
 * (`/mcp` and below) answers JSON-RPC errors, not envelopes (see `src/mcp/mcp-http.middleware.ts`).
 */
export const OWN_BODY_PARSING_PATHS = /^\/mcp(\/|$)/;

/** Paths (exact) that take `multipart/form-data` instead of JSON (a JSON body there is a 415). */
export const MULTIPART_PATHS = new Set(['/v1/screenshot/upload']);

/**
 * Express middleware chain for request bodies: a 415 `UNSUPPORTED_MEDIA_TYPE` for a body that is
 * neither JSON nor (on {@link MULTIPART_PATHS}) multipart, JSON parsing limited to
 * {@link JSON_BODY_LIMIT_BYTES}, and body-parser failures as envelopes (400 `INVALID_JSON`,
 * 413 `PAYLOAD_TOO_LARGE`) instead of Express's HTML error page. Paths under
 * {@link OWN_BODY_PARSING_PATHS} are passed through unparsed.
 */
export function bodyParsingMiddleware() {
  const requireSupportedType = (req: Request, res: Response, next: NextFunction) => {
    if (!req.path.startsWith('/v1/') || !hasBody(req)) return next();
    if (MULTIPART_PATHS.has(req.path) ? req.is('multipart/form-data') : req.is('application/json')) return next();
    const allowed = MULTIPART_PATHS.has(req.path) ? 'multipart/form-data' : 'application/json';
    sendError(
      res,
      requestIdOf(req),
      new ApiError(ErrorCode.UNSUPPORTED_MEDIA_TYPE, 415, `Content-Type must be ${allowed}`),
    );
  };
  const renderParserError = (err: unknown, req: Request, res: Response, next: NextFunction) => {
    const type = (err as { type?: string }).type;
    if (type === 'entity.parse.failed') {
      return sendError(res, requestIdOf(req), new ApiError(ErrorCode.INVALID_JSON, 400, 'Request body is not valid JSON'));
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
    next(err);
  };
  const parseJson = express.json({ limit: JSON_BODY_LIMIT_BYTES });
  const parseJsonUnlessOwn = (req: Request, res: Response, next: NextFunction) =>
    OWN_BODY_PARSING_PATHS.test(req.path) ? next() : parseJson(req, res, next);
  return [requireSupportedType, parseJsonUnlessOwn, renderParserError];
}

function hasBody(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}
