import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccountsModule } from '../accounts/accounts.module';
import { ApiKey } from './api-key.entity';
import { ApiKeyGuard } from './api-key.guard';
import { ApiKeysService } from './api-keys.service';
import { KeyCache } from './key-cache';

@Module({
  imports: [TypeOrmModule.forFeature([ApiKey]), AccountsModule],
  providers: [ApiKeysService, ApiKeyGuard, KeyCache],
  exports: [ApiKeysService, ApiKeyGuard, KeyCache],
})
export class AuthModule {}
