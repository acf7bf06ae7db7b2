import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthModule } from '../auth/auth.module';
import { EventsModule } from '../events/events.module';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { Profile } from './profile.entity';
import { ProfilesController } from './profiles.controller';
import { ProfilesService } from './profiles.service';

/** Browser profiles: saved logged-in browser states bound to their domains (CONTRACT.md, "Browser profiles (logged-in captures)"). */
@Module({
  imports: [TypeOrmModule.forFeature([Profile]), AuthModule, IdempotencyModule, EventsModule],
  controllers: [ProfilesController],
  providers: [ProfilesService],
  exports: [ProfilesService],
})
export class ProfilesModule {}
