import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { KeyCache } from './key-cache';
import { newId } from '../common/ids';
import { Account } from './account.entity';
import { Plan } from './plan';

/** Thrown by the accounts service for a missing account or a duplicate email (CLI-facing). */
export class AccountError extends Error {}

/** Emails are stored and looked up trimmed and lower-cased. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** Creates accounts, finds them by id or email, and changes their plan. */
@Injectable()
export class AccountsService {
  constructor(
    @InjectRepository(Account) private readonly accounts: Repository<Account>,
    private readonly keyCache: KeyCache,
  ) {}

  /** Creates an account. Throws {@link AccountError} when the email is taken. */
  async create(email: string, plan: Plan): Promise<Account> {
    const normalized = normalizeEmail(email);
    if (await this.accounts.existsBy({ email: normalized })) {
      throw new AccountError(`An account with email ${normalized} already exists`);
    }
    return this.accounts.save(this.accounts.create({ id: newId('account'), email: normalized, plan }));
  }

  /** The account with this id (`acc_…`) or email. Throws {@link AccountError} when there is none. */
  async get(idOrEmail: string): Promise<Account> {
    const account = idOrEmail.startsWith('acc_')
      ? await this.accounts.findOneBy({ id: idOrEmail })
      : await this.accounts.findOneBy({ email: normalizeEmail(idOrEmail) });
    if (!account) throw new AccountError(`No account ${idOrEmail}`);
    return account;
  }

  /**
   * Moves an account to another plan; its keys' caps change on their next request (cached key
   * lookups, which carry the plan, are invalidated in every process: {@link KeyCache.bump}).
   */
  async changePlan(idOrEmail: string, plan: Plan): Promise<Account> {
    const account = await this.get(idOrEmail);
    account.plan = plan;
    const saved = await this.accounts.save(account);
    await this.keyCache.bump();
    return saved;
  }
}
