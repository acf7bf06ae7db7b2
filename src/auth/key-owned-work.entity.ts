import { Column, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { Account } from '../accounts/account.entity';
import { ApiKey } from './api-key.entity';

/**
 * The columns every kind of work submitted with an API key has (screenshot jobs, browser session
 * runs): its prefixed id (`scr_…`, `run_…`), the account it belongs to and the key it counted
 * against; deleting the account or the key deletes the work (`ON DELETE CASCADE`). Entities extend it.
 */
export abstract class KeyOwnedWork {
  @PrimaryColumn({ type: 'varchar', length: 40 })
  id: string;

  @Column({ name: 'account_id', type: 'varchar', length: 40 })
  accountId: string;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id' })
  account?: Account;

  @Index()
  @Column({ name: 'api_key_id', type: 'varchar', length: 40 })
  apiKeyId: string;

  @ManyToOne(() => ApiKey, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'api_key_id' })
  apiKey?: ApiKey;
}
