import { MiddlewareConsumer, Module, NestModule, RequestMethod } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { CrawlsModule } from '../crawls/crawls.module';
import { MonitorsModule } from '../monitors/monitors.module';
import { QuotaModule } from '../quota/quota.module';
import { RunsModule } from '../runs/runs.module';
import { ScreenshotsModule } from '../screenshots/screenshots.module';
import { StorageModule } from '../storage/storage.module';
import { McpController } from './mcp.controller';
import { McpEndpointService } from './mcp-endpoint.service';
import { McpHttpMiddleware } from './mcp-http.middleware';
import { McpToolsService } from './mcp-tools.service';

/** The MCP endpoint for AI agents (`POST /mcp` with `Authorization: Bearer <API_KEY>`, or `/mcp/<API_KEY>`) and its tools. */
@Module({
  imports: [AuthModule, QuotaModule, ScreenshotsModule, StorageModule, RunsModule, MonitorsModule, CrawlsModule],
  controllers: [McpController],
  providers: [McpEndpointService, McpToolsService, McpHttpMiddleware],
})
export class McpModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer
      .apply(McpHttpMiddleware)
      .forRoutes({ path: 'mcp', method: RequestMethod.ALL }, { path: 'mcp/*path', method: RequestMethod.ALL });
  }
}
