import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccountsModule } from './accounts/accounts.module';
import { AuthModule } from './auth/auth.module';
import { CommonModule } from './common/common.module';
import { AppConfig } from './config/app-config';
import { ConfigModule } from './config/config.module';
import { DashboardModule } from './dashboard/dashboard.module';
import { dataSourceOptions } from './database/data-source';
import { HealthModule } from './health/health.module';
import { LoggingModule } from './logging/logging.module';
import { McpModule } from './mcp/mcp.module';
import { MetricsModule } from './metrics/metrics.module';
import { MonitorsModule } from './monitors/monitors.module';
import { CrawlsModule } from './crawls/crawls.module';
import { ProfilesModule } from './profiles/profiles.module';
import { QueueModule } from './queue/queue.module';
import { QuotaModule } from './quota/quota.module';
import { RetentionModule } from './retention/retention.module';
import { RenderModule } from './render/render.module';
import { RunsModule } from './runs/runs.module';
import { ScreenshotsModule } from './screenshots/screenshots.module';
import { StorageModule } from './storage/storage.module';
import { WebhooksModule } from './webhooks/webhooks.module';

/** How a process uses the module graph. */
export interface AppModuleOptions {
  config: AppConfig;
  /** Run the queue processors in this process. */
  runProcessors: boolean;
}

/** The whole service; `main.ts`, `worker.ts`, `cli.ts` and the tests build it with their options. */
@Module({})
export class AppModule {
  static register({ config, runProcessors }: AppModuleOptions): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        LoggingModule,
        CommonModule,
        MetricsModule,
        TypeOrmModule.forRoot(dataSourceOptions(config)),
        QueueModule.forRoot(config, runProcessors),
        AccountsModule,
        AuthModule,
        QuotaModule,
        StorageModule,
        ProfilesModule,
        ScreenshotsModule,
        RunsModule,
        RenderModule,
        MonitorsModule,
        CrawlsModule,
        WebhooksModule,
        McpModule,
        HealthModule,
        DashboardModule,
        RetentionModule,
      ],
    };
  }
}
