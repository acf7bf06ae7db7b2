import { AcceptanceModule } from '../acceptance/acceptance.module';
import { BullModule } from '@nestjs/bull';
import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthModule } from '../auth/auth.module';
import { BrowserModule } from '../browser/browser.module';
import { CaptureModule } from '../capture/capture.module';
import { EgressModule } from '../egress/egress.module';
import { EventsModule } from '../events/events.module';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { RUN_QUEUE } from '../queue/queues';
import { QuotaModule } from '../quota/quota.module';
import { ProfilesModule } from '../profiles/profiles.module';
import { ScreenshotsModule } from '../screenshots/screenshots.module';
import { StorageModule } from '../storage/storage.module';
import { Run } from './run.entity';
import { RunLifecycle } from './run-lifecycle';
import { RunWork } from './run-work';
import { RunsController } from './runs.controller';
import { RunProcessor } from './run.processor';
import { RunsService } from './runs.service';

/** Browser session runs (ARCHITECTURE.md, runs/): REST API, lifecycle and the run processor. */
@Module({
  imports: [
    TypeOrmModule.forFeature([Run]),
    BullModule.registerQueue({ name: RUN_QUEUE }),
    AuthModule,
    BrowserModule,
    CaptureModule,
    EgressModule,
    StorageModule,
    EventsModule,
    QuotaModule,
    IdempotencyModule,
    AcceptanceModule,
    ScreenshotsModule,
    ProfilesModule,
  ],
  controllers: [RunsController],
  providers: [RunsService, RunWork, RunLifecycle, RunProcessor],
  exports: [RunsService],
})
export class RunsModule {}
