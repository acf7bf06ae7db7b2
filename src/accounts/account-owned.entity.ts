import { Column, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { Account } from './account.entity';

/**
 * The columns every resource of an account has (users, API keys, webhook endpoints, render keys, storage
 * destinations, and through {@link KeyOwnedWork} jobs and runs): its prefixed id (`we_…`, `rk_…`, `dst_…`, …;
 * docs/CONTRACT.md "Identifiers") and the account it belongs to; deleting the account deletes it
 * (`ON DELETE CASCADE`). Entities extend it.
 */
export abstract class AccountOwned {
  @PrimaryColumn({ type: 'varchar', length: 40 })
  id: string;

  @Column({ name: 'account_id', type: 'varchar', length: 40 })
  accountId: string;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id' })
  account?: Account;
}
