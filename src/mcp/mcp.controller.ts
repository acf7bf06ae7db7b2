import { All, Controller, Param, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { ParsesOwnBody } from '../common/body-parsing-routes';
import { McpEndpointService } from './mcp-endpoint.service';

/**
 * Routes of the MCP endpoint (outside `/v1`, not in the OpenAPI document: its protocol is MCP over
 * JSON-RPC): `POST /mcp` with `Authorization: Bearer <API_KEY>` (preferred, CONTRACT.md "MCP") and the
 * spec's `{base_url}/mcp/<API_KEY>`. Origin check, CORS and body parsing run before, in
 * {@link McpHttpMiddleware}.
 */
@ApiExcludeController()
@ParsesOwnBody()
@Controller('mcp')
export class McpController {
  constructor(private readonly endpoint: McpEndpointService) {}

  @Post()
  postWithHeader(@Req() req: Request, @Res() res: Response): Promise<void> {
    return this.endpoint.handleHeaderPost(req, res);
  }

  @Post(':key')
  post(@Param('key') key: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    return this.endpoint.handlePost(key, req, res);
  }

  @All(':key')
  otherMethod(@Res() res: Response): void {
    this.endpoint.rejectMethod(res);
  }

  @All()
  otherMethodWithoutKey(@Res() res: Response): void {
    this.endpoint.rejectMethod(res);
  }
}
