import { Inject, Injectable, Logger, NestMiddleware } from '@nestjs/common';
import cors from 'cors';
import express, { NextFunction, Request, RequestHandler, Response } from 'express';
import { ErrorCode } from '../common/api-error';
import { INVALID_UTF8, requireUtf8 } from '../common/body-parsing';
import { findBodyProblem, MAX_BODY_DEPTH } from '../common/request-body-rules';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { JsonRpcErrorCode, MCP_SERVER_ERROR, sendJsonRpcError } from './json-rpc-error';

/**
 * Largest MCP request body, in bytes (64 KiB). The biggest message a client sends is a `tools/call`
 * of `take_screenshot` (a URL of at most 2,048 characters and five numbers) or an `initialize` with
 * the client's capabilities: a few KiB. A larger body is answered 413 before it is read further.
 * The REST limit (`JSON_BODY_LIMIT_BYTES`) does not apply under `/mcp`.
 */
export const MCP_BODY_LIMIT_BYTES = 64 * 1024;

/** Request headers a browser-based MCP client sends (answered in CORS preflights). */
const MCP_REQUEST_HEADERS = ['Authorization', 'Content-Type', 'Accept', 'Mcp-Protocol-Version', 'Mcp-Session-Id', 'Last-Event-ID'];

/** `/mcp/<key>` with the key replaced, for log lines (the key must never be logged). */
export function redactMcpPath(path: string): string {
  return path.replace(/^\/mcp\/[^/]+/, '/mcp/<redacted>');
}

/**
 * Runs before every `/mcp` route, in this order:
 * 1. The spec's `Origin` rule: a request whose `Origin` header is not in `MCP_ALLOWED_ORIGINS` gets 403
 *    with a JSON-RPC error body; a request without `Origin` (any non-browser client) passes.
 * 2. CORS for the allowed origins (preflight `OPTIONS` answered 204), so browser-based clients work.
 * 3. The body: parsed as JSON whatever its `Content-Type` (the MCP transport then insists on
 *    `application/json` itself), at most {@link MCP_BODY_LIMIT_BYTES}; failures are JSON-RPC errors
 *    (400 parse error -32700, 413 `PAYLOAD_TOO_LARGE`, 415 for an unsupported encoding), never envelopes.
 *    A body that is not valid UTF-8 or nests deeper than {@link MAX_BODY_DEPTH} is a parse error too.
 */
@Injectable()
export class McpHttpMiddleware implements NestMiddleware {
  private readonly logger = new Logger('McpHttp');
  private readonly allowedOrigins: Set<string>;
  private readonly cors: RequestHandler;
  private readonly parseJson: RequestHandler;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.allowedOrigins = new Set(config.mcpAllowedOrigins);
    // Only allowed origins get past step 1, so CORS reflects the request's origin.
    this.cors = cors({ origin: true, methods: ['POST'], allowedHeaders: MCP_REQUEST_HEADERS, maxAge: 600 });
    this.parseJson = express.json({ limit: MCP_BODY_LIMIT_BYTES, type: () => true, verify: requireUtf8 });
  }

  use(req: Request, res: Response, next: NextFunction): void {
    const origin = req.headers.origin;
    if (origin !== undefined && !this.isAllowedOrigin(origin)) {
      return sendJsonRpcError(res, 403, MCP_SERVER_ERROR, `Origin ${origin} is not allowed to use this MCP endpoint`);
    }
    this.cors(req, res, (corsError?: unknown) => {
      if (corsError) return this.renderBodyError(corsError, req, res);
      this.parseJson(req, res, (parseError?: unknown) => {
        if (parseError) return this.renderBodyError(parseError, req, res);
        if (req.body !== undefined && findBodyProblem(req.body)?.kind === 'tooDeep') {
          return sendJsonRpcError(
            res,
            400,
            JsonRpcErrorCode.ParseError,
            `Parse error: the request body nests deeper than ${MAX_BODY_DEPTH} levels`,
            ErrorCode.INVALID_JSON,
          );
        }
        next();
      });
    });
  }

  /** Whether a browser `Origin` header value is in the allow-list (compared in serialized form). */
  isAllowedOrigin(origin: string): boolean {
    try {
      return this.allowedOrigins.has(new URL(origin).origin);
    } catch {
      return false; // "null" (sandboxed frames, file://) and garbage
    }
  }

  private renderBodyError(err: unknown, req: Request, res: Response): void {
    const type = (err as { type?: string }).type;
    if (type === 'entity.parse.failed' || type === INVALID_UTF8) {
      return sendJsonRpcError(
        res,
        400,
        JsonRpcErrorCode.ParseError,
        'Parse error: the request body is not valid UTF-8 JSON',
        ErrorCode.INVALID_JSON,
      );
    }
    if (type === 'entity.too.large') {
      return sendJsonRpcError(
        res,
        413,
        JsonRpcErrorCode.InvalidRequest,
        `Request body exceeds ${MCP_BODY_LIMIT_BYTES} bytes`,
        ErrorCode.PAYLOAD_TOO_LARGE,
      );
    }
    if (type === 'encoding.unsupported' || type === 'charset.unsupported') {
      return sendJsonRpcError(res, 415, JsonRpcErrorCode.InvalidRequest, 'Unsupported body encoding', ErrorCode.UNSUPPORTED_MEDIA_TYPE);
    }
    const status = (err as { status?: number }).status;
    if (status && status >= 400 && status < 500) {
      return sendJsonRpcError(res, status, JsonRpcErrorCode.InvalidRequest, 'The request body could not be read');
    }
    this.logger.error(`${req.method} ${redactMcpPath(req.path)}: reading the body failed`, (err as Error).stack);
    sendJsonRpcError(res, 500, JsonRpcErrorCode.InternalError, 'Internal server error', ErrorCode.INTERNAL_ERROR);
  }
}
