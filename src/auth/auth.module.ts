import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccountsModule } from '../accounts/accounts.module';
import { ApiKey } from './api-key.entity';
import { ApiKeyGuard } from './api-key.guard';
import { ApiKeysService } from './api-keys.service';

@Module({
  imports: [TypeOrmModule.forFeature([ApiKey]), AccountsModule],
  providers: [ApiKeysService, ApiKeyGuard],
  // KeyCache is provided by AccountsModule (a plan change invalidates it) and re-exported here.
  exports: [ApiKeysService, ApiKeyGuard, AccountsModule],
})
export class AuthModule {}
