import { BullModule } from '@nestjs/bull';
import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AcceptanceModule } from '../acceptance/acceptance.module';
import { AuthModule } from '../auth/auth.module';
import { CaptureModule } from '../capture/capture.module';
import { EgressModule } from '../egress/egress.module';
import { EventsModule } from '../events/events.module';
import { ExtractModule } from '../extract/extract.module';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { CAPTURE_QUEUE, HOUSEKEEPING_QUEUE } from '../queue/queues';
import { QuotaModule } from '../quota/quota.module';
import { StorageModule } from '../storage/storage.module';
import { ProfilesModule } from '../profiles/profiles.module';
import { StorageDestinationsModule } from '../storage-destinations/storage-destinations.module';
import { CaptureProcessor } from './capture.processor';
import { CaptureWork } from './capture-work';
import { HousekeepingProcessor } from './housekeeping.processor';
import { ScreenshotJob } from './screenshot-job.entity';
import { ScreenshotJobLifecycle } from './screenshot-job-lifecycle';
import { ScreenshotUpload } from './screenshot-upload.entity';
import { ScreenshotsController } from './screenshots.controller';
import { ScreenshotsService } from './screenshots.service';

@Module({
  imports: [
    TypeOrmModule.forFeature([ScreenshotJob, ScreenshotUpload]),
    BullModule.registerQueue({ name: CAPTURE_QUEUE }, { name: HOUSEKEEPING_QUEUE }),
    AuthModule,
    CaptureModule,
    EgressModule,
    StorageModule,
    StorageDestinationsModule,
    ProfilesModule,
    ExtractModule,
    EventsModule,
    QuotaModule,
    IdempotencyModule,
    AcceptanceModule,
  ],
  controllers: [ScreenshotsController],
  providers: [ScreenshotsService, CaptureWork, ScreenshotJobLifecycle, CaptureProcessor, HousekeepingProcessor],
  exports: [ScreenshotsService],
})
export class ScreenshotsModule {}
