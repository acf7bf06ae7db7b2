import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Account } from './account.entity';
import { AccountsService } from './accounts.service';
import { PasswordHasher } from './password-hasher';
import { PasswordLink } from './password-link.entity';
import { User } from './user.entity';
import { UsersService } from './users.service';

/** Accounts and their plans, and the dashboard users who belong to them. */
@Module({
  imports: [TypeOrmModule.forFeature([Account, User, PasswordLink])],
  providers: [AccountsService, UsersService, PasswordHasher],
  exports: [AccountsService, UsersService, PasswordHasher],
})
export class AccountsModule {}
