import { ErrorCode as JsonRpcErrorCode, JSONRPC_VERSION, type JSONRPCErrorResponse } from '@modelcontextprotocol/sdk/types.js';
import type { Response } from 'express';

export { JsonRpcErrorCode };

/**
 * JSON-RPC 2.0 reserves -32000 to -32099 for implementation-defined server errors; the MCP endpoint
 * uses -32000 for every rejection at the HTTP level (authentication, origin, method), as the SDK's
 * own transport does, and names the contract's code (e.g. `INVALID_API_KEY`) in `error.data.code`.
 */
export const MCP_SERVER_ERROR = JsonRpcErrorCode.ConnectionClosed;

/**
 * Answers an MCP request that is refused before it reaches the MCP server (wrong key, foreign origin,
 * GET or DELETE, unreadable body) with HTTP `status` and a JSON-RPC error body
 * `{ jsonrpc: "2.0", error: { code, message, data? }, id: null }`; `id` is null because the request is
 * not processed. `contractCode` (CONTRACT.md's error code, when there is one) goes to `error.data.code`,
 * with the error's `details` (e.g. `limit`) beside it.
 * The key in the request path is never part of the body.
 */
export function sendJsonRpcError(
  res: Response,
  status: number,
  code: number,
  message: string,
  contractCode?: string,
  headers: Record<string, string> = {},
  details?: Record<string, unknown>,
): void {
  const body: Omit<JSONRPCErrorResponse, 'id'> & { id: null } = {
    jsonrpc: JSONRPC_VERSION,
    error: { code, message, ...(contractCode ? { data: { code: contractCode, ...details } } : {}) },
    id: null,
  };
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.status(status).json(body);
}
