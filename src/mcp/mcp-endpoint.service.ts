import { Injectable, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { bearerToken } from '../common/bearer-token';
import { ApiKeysService } from '../auth/api-keys.service';
import { ApiError, ErrorCode } from '../common/api-error';
import { assertOrganizationOf } from '../common/organization-id';
import { RequestRateLimiter } from '../quota/request-rate-limiter';
import { JsonRpcErrorCode, MCP_SERVER_ERROR, sendJsonRpcError } from './json-rpc-error';
import { redactMcpPath } from './mcp-http.middleware';
import { McpToolsService } from './mcp-tools.service';

/**
 * The MCP endpoint (spec sections 4.5 and 5, CONTRACT.md "MCP"): stateless Streamable HTTP with JSON
 * responses. Each POST is authenticated by the key in its `Authorization: Bearer` header (`POST /mcp`,
 * preferred: keys stay out of proxy and access logs) or in its path (`/mcp/<API_KEY>`), then served by a fresh MCP server and
 * transport that live as long as that one HTTP exchange. The SDK negotiates the protocol version and
 * checks `Accept` and `Content-Type`. Refusals before the MCP server (401, 405, 500) are JSON-RPC errors.
 */
@Injectable()
export class McpEndpointService {
  private readonly logger = new Logger('McpEndpoint');

  constructor(
    private readonly apiKeys: ApiKeysService,
    private readonly tools: McpToolsService,
    private readonly rateLimiter: RequestRateLimiter,
  ) {}

  /**
   * Serves one JSON-RPC POST for the key `secret` (its body already parsed by the MCP middleware).
   * An unknown or revoked key is HTTP 401 with `error.data.code` `INVALID_API_KEY` or `API_KEY_REVOKED`,
   * and no tool runs; a key over `RATE_LIMIT_PER_SECOND` is HTTP 429 with `Retry-After` and
   * `error.data` `{ code: "RATE_LIMITED", limit, windowSeconds }`; an `X-Organization-ID` naming another
   * account is HTTP 403 with `error.data.code` `ORGANIZATION_MISMATCH` (400 `INVALID_ORGANIZATION_ID`
   * for a malformed one). Never throws: unexpected failures are logged (path redacted) and answered 500.
   */
  async handlePost(secret: string, req: Request, res: Response): Promise<void> {
    try {
      const caller = await this.apiKeys.authenticate(secret);
      assertOrganizationOf(req.headers['x-organization-id'], caller.accountId);
      await this.rateLimiter.consume(caller);
      const server = await this.tools.createServer(caller);
      const { StreamableHTTPServerTransport } = await import('@modelcontextprotocol/sdk/server/streamableHttp.js');
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) {
        return sendJsonRpcError(res, 401, MCP_SERVER_ERROR, err.message, err.code);
      }
      if (err instanceof ApiError && (err.code === ErrorCode.ORGANIZATION_MISMATCH || err.code === ErrorCode.INVALID_ORGANIZATION_ID)) {
        return sendJsonRpcError(res, err.status, MCP_SERVER_ERROR, err.message, err.code);
      }
      if (err instanceof ApiError && err.code === ErrorCode.RATE_LIMITED) {
        return sendJsonRpcError(res, 429, MCP_SERVER_ERROR, err.message, err.code, err.headers, err.details);
      }
      this.logger.error(`${req.method} ${redactMcpPath(req.path)} failed`, (err as Error).stack);
      if (!res.headersSent) sendJsonRpcError(res, 500, JsonRpcErrorCode.InternalError, 'Internal server error', ErrorCode.INTERNAL_ERROR);
    }
  }

  /**
   * GET, DELETE and every other method but POST: 405 with `Allow: POST`. The endpoint is stateless,
   * so there is no server-sent event stream to open (GET) and no session to end (DELETE).
   */
  rejectMethod(res: Response): void {
    sendJsonRpcError(res, 405, MCP_SERVER_ERROR, 'Method not allowed: this MCP endpoint is stateless and takes only POST', undefined, {
      Allow: 'POST',
    });
  }

  /**
   * `POST /mcp`: the key comes from `Authorization: Bearer <API_KEY>`, then the request is served as
   * {@link handlePost} serves it. Without that header (or in another form): 401 `UNAUTHENTICATED`,
   * telling where the key goes.
   */
  async handleHeaderPost(req: Request, res: Response): Promise<void> {
    const key = bearerToken(req.headers.authorization);
    if (!key) {
      return sendJsonRpcError(
        res,
        401,
        MCP_SERVER_ERROR,
        'Send your API key as "Authorization: Bearer <API_KEY>" (or in the path: /mcp/<API_KEY>)',
        ErrorCode.UNAUTHENTICATED,
      );
    }
    return this.handlePost(key, req, res);
  }
}
