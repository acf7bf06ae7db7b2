import { Column, Index, JoinColumn, ManyToOne } from 'typeorm';
import { AccountOwned } from '../accounts/account-owned.entity';
import { ApiKey } from './api-key.entity';

/**
 * The columns of what is submitted with an API key and counts against it (screenshot jobs, browser
 * session runs, render keys): those of {@link AccountOwned}, and the key; deleting the key deletes it
 * too (`ON DELETE CASCADE`). Entities extend it.
 */
export abstract class KeyOwnedWork extends AccountOwned {
  @Index()
  @Column({ name: 'api_key_id', type: 'varchar', length: 40 })
  apiKeyId: string;

  @ManyToOne(() => ApiKey, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'api_key_id' })
  apiKey?: ApiKey;
}
