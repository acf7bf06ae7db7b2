import { BullModule } from '@nestjs/bull';
import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthModule } from '../auth/auth.module';
import { EgressModule } from '../egress/egress.module';
import { EventsModule } from '../events/events.module';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { MONITOR_QUEUE } from '../queue/queues';
import { ProfilesModule } from '../profiles/profiles.module';
import { ScreenshotsModule } from '../screenshots/screenshots.module';
import { StorageModule } from '../storage/storage.module';
import { ImageComparePool } from './image-compare-pool';
import { MonitorCheckLifecycle } from './monitor-check-lifecycle';
import { MonitorCheck } from './monitor-check.entity';
import { MonitorChecksService } from './monitor-checks.service';
import { MonitorScheduler } from './monitor-scheduler';
import { Monitor } from './monitor.entity';
import { MonitorsController } from './monitors.controller';
import { MonitorsService } from './monitors.service';

/** Monitors: REST API, durable schedule, comparison and `monitor.*` events (CONTRACT.md, "Monitors"). */
@Module({
  imports: [
    TypeOrmModule.forFeature([Monitor, MonitorCheck]),
    BullModule.registerQueue({ name: MONITOR_QUEUE }),
    AuthModule,
    EgressModule,
    EventsModule,
    IdempotencyModule,
    ScreenshotsModule,
    ProfilesModule,
    StorageModule,
  ],
  controllers: [MonitorsController],
  providers: [MonitorsService, MonitorChecksService, MonitorCheckLifecycle, MonitorScheduler, ImageComparePool],
  exports: [MonitorsService],
})
export class MonitorsModule {}
