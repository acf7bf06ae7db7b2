import { BullModule } from '@nestjs/bull';
import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthModule } from '../auth/auth.module';
import { EgressModule } from '../egress/egress.module';
import { EventsModule } from '../events/events.module';
import { ProfilesModule } from '../profiles/profiles.module';
import { CRAWL_QUEUE } from '../queue/queues';
import { ScreenshotsModule } from '../screenshots/screenshots.module';
import { StorageModule } from '../storage/storage.module';
import { CrawlBundle } from './crawl-bundle';
import { CrawlLifecycle } from './crawl-lifecycle';
import { CrawlPages } from './crawl-pages';
import { CrawlWork } from './crawl-work';
import { Crawl, CrawlPage } from './crawl.entity';
import { CrawlProcessor } from './crawl.processor';
import { CrawlsController } from './crawls.controller';
import { CrawlsService } from './crawls.service';
import { SiteDiscovery } from './site-discovery';

/** Crawls (ARCHITECTURE.md, crawls/): REST API, lifecycle, discovery, the crawl processor and the bundle. */
@Module({
  imports: [
    TypeOrmModule.forFeature([Crawl, CrawlPage]),
    BullModule.registerQueue({ name: CRAWL_QUEUE }),
    AuthModule,
    EgressModule,
    EventsModule,
    ProfilesModule,
    ScreenshotsModule,
    StorageModule,
  ],
  controllers: [CrawlsController],
  providers: [CrawlsService, CrawlLifecycle, CrawlPages, CrawlWork, CrawlProcessor, CrawlBundle, SiteDiscovery],
  exports: [CrawlsService],
})
export class CrawlsModule {}
