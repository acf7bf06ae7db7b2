import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthModule } from '../auth/auth.module';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { RenderKey } from './render-key.entity';
import { RenderKeysController } from './render-keys.controller';
import { RenderKeysService } from './render-keys.service';

/** Render keys and render links (CONTRACT.md, "Render links"). */
@Module({
  imports: [TypeOrmModule.forFeature([RenderKey]), AuthModule, IdempotencyModule],
  controllers: [RenderKeysController],
  providers: [RenderKeysService],
  exports: [RenderKeysService],
})
export class RenderModule {}
