import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { KeyCache } from './key-cache';
import { Account } from './account.entity';
import { AccountsService } from './accounts.service';
import { PasswordHasher } from './password-hasher';
import { PasswordLink } from './password-link.entity';
import { User } from './user.entity';
import { UsersService } from './users.service';

/**
 * Accounts and their plans, and the dashboard users who belong to them. Provides the `KeyCache` of
 * key lookups (API keys in auth/, render keys), which a plan change invalidates; `AuthModule` re-exports it.
 */
@Module({
  imports: [TypeOrmModule.forFeature([Account, User, PasswordLink])],
  providers: [AccountsService, UsersService, PasswordHasher, KeyCache],
  exports: [AccountsService, UsersService, PasswordHasher, KeyCache],
})
export class AccountsModule {}
