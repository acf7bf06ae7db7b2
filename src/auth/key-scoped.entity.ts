import { JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { ApiKey } from './api-key.entity';

/**
 * The leading primary-key column of a row kept per API key (monthly and daily quota usage, quota
 * warnings, idempotency keys): `api_key_id`, the key it counts for; deleting the key deletes its rows
 * (`ON DELETE CASCADE`). Entities extend it and add the rest of their primary key.
 */
export abstract class KeyScoped {
  @PrimaryColumn({ name: 'api_key_id', type: 'varchar', length: 40 })
  apiKeyId: string;

  @ManyToOne(() => ApiKey, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'api_key_id' })
  apiKey?: ApiKey;
}
