import { MiddlewareConsumer, Module, NestModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccountsModule } from '../accounts/accounts.module';
import { AuthModule } from '../auth/auth.module';
import { MonitorsModule } from '../monitors/monitors.module';
import { QuotaModule } from '../quota/quota.module';
import { RunsModule } from '../runs/runs.module';
import { RenderModule } from '../render/render.module';
import { ScreenshotsModule } from '../screenshots/screenshots.module';
import { ProfilesModule } from '../profiles/profiles.module';
import { StorageDestinationsModule } from '../storage-destinations/storage-destinations.module';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { DashboardAssetsController } from './dashboard-assets.controller';
import { DashboardAuthController } from './dashboard-auth.controller';
import { DashboardExceptionFilter } from './dashboard-exception.filter';
import { DashboardMonitorsController } from './dashboard-monitors.controller';
import { DashboardCrawlsController } from './dashboard-crawls.controller';
import { CrawlsModule } from '../crawls/crawls.module';
import { DashboardNotFoundController, DashboardPagesController } from './dashboard-pages.controller';
import { DashboardSession } from './dashboard-session.entity';
import { DashboardSessionsService } from './dashboard-sessions.service';
import { DashboardStorageController } from './dashboard-storage.controller';
import { DashboardProfilesController } from './dashboard-profiles.controller';
import { DashboardOidcService } from './dashboard-oidc.service';
import { DashboardPlaygroundController } from './dashboard-playground.controller';
import { DashboardPlaygroundService } from './dashboard-playground.service';
import { DashboardRenderLinksController } from './dashboard-render-links.controller';
import { DashboardRenderLinksService } from './dashboard-render-links.service';
import { DashboardSignInService } from './dashboard-sign-in.service';
import { DashboardViews } from './dashboard-views';
import { DashboardMiddleware } from './dashboard.middleware';
import { DashboardService } from './dashboard.service';
import { SignInFailure } from './sign-in-failure.entity';

/**
 * The dashboard under `/dashboard` (CONTRACT.md "Dashboard"): server-rendered Eta pages
 * with htmx, sessions and CSRF, calling the same services as the REST API.
 */
/** The dashboard's controllers, all behind {@link DashboardMiddleware}; the catch-all 404 controller must stay last. */
const DASHBOARD_CONTROLLERS = [
  DashboardAssetsController,
  DashboardAuthController,
  DashboardPagesController,
  DashboardMonitorsController,
  DashboardCrawlsController,
  DashboardPlaygroundController,
  DashboardStorageController,
  DashboardProfilesController,
  DashboardRenderLinksController,
  DashboardNotFoundController,
];

@Module({
  imports: [
    TypeOrmModule.forFeature([DashboardSession, SignInFailure]),
    AccountsModule,
    AuthModule,
    MonitorsModule,
    CrawlsModule,
    QuotaModule,
    RenderModule,
    RunsModule,
    ScreenshotsModule,
    WebhooksModule,
    StorageDestinationsModule,
    ProfilesModule,
  ],
  controllers: DASHBOARD_CONTROLLERS,
  providers: [
    DashboardViews,
    DashboardSessionsService,
    DashboardSignInService,
    DashboardOidcService,
    DashboardService,
    DashboardPlaygroundService,
    DashboardRenderLinksService,
    DashboardExceptionFilter,
  ],
})
export class DashboardModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(DashboardMiddleware).forRoutes(...DASHBOARD_CONTROLLERS);
  }
}
