import { All, Controller, Param, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { McpEndpointService } from './mcp-endpoint.service';

/**
 * Routes of the MCP endpoint `{base_url}/mcp/<API_KEY>` (outside `/v1`, not in the OpenAPI document:
 * its protocol is MCP over JSON-RPC). Origin check, CORS and body parsing run before, in
 * {@link McpHttpMiddleware}.
 */
@ApiExcludeController()
@Controller('mcp')
export class McpController {
  constructor(private readonly endpoint: McpEndpointService) {}

  @Post(':key')
  post(@Param('key') key: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    return this.endpoint.handlePost(key, req, res);
  }

  @All(':key')
  otherMethod(@Res() res: Response): void {
    this.endpoint.rejectMethod(res);
  }

  @All()
  missingKey(@Res() res: Response): void {
    this.endpoint.rejectMissingKey(res);
  }
}
