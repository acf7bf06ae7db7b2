import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthModule } from '../auth/auth.module';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { RenderKey } from './render-key.entity';
import { RenderKeysController } from './render-keys.controller';
import { RenderKeysService } from './render-keys.service';
import { RenderLinkGuard } from './render-link.guard';
import { RenderLinksController } from './render-links.controller';
import { RenderLinksService } from './render-links.service';
import { ProfilesModule } from '../profiles/profiles.module';
import { ScreenshotsModule } from '../screenshots/screenshots.module';
import { StorageModule } from '../storage/storage.module';

/** Render keys and render links (CONTRACT.md, "Render links"). */
@Module({
  imports: [TypeOrmModule.forFeature([RenderKey]), AuthModule, IdempotencyModule, ScreenshotsModule, StorageModule, ProfilesModule],
  controllers: [RenderKeysController, RenderLinksController],
  providers: [RenderKeysService, RenderLinksService, RenderLinkGuard],
  exports: [RenderKeysService, RenderLinksService],
})
export class RenderModule {}
