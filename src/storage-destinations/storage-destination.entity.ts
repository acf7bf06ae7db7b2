import { Column, Entity, Index } from 'typeorm';
import { AccountOwned } from '../accounts/account-owned.entity';
import { TimestampColumn } from '../common/timestamp-column';

/** Kinds of storage destination (CONTRACT.md, "Storage destinations"): S3-compatible buckets. */
export const STORAGE_DESTINATION_TYPES = ['s3'] as const;
export type StorageDestinationType = (typeof STORAGE_DESTINATION_TYPES)[number];

/**
 * A customer's own bucket that capture results are uploaded to (CONTRACT.md, "Storage destinations").
 * The access key pair is stored sealed ({@link SecretCipher}, bound to this id) and never returned.
 */
@Entity({ name: 'storage_destinations' })
@Index(['accountId', 'createdAt'])
export class StorageDestination extends AccountOwned {
  @Column({ type: 'varchar', length: 8 })
  type: StorageDestinationType;

  @Column({ type: 'varchar', length: 255 })
  bucket: string;

  /** The bucket's region (`us-east-1` when none was given). */
  @Column({ type: 'varchar', length: 64 })
  region: string;

  /** An S3-compatible endpoint URL (MinIO, R2, …); null for AWS S3 itself. */
  @Column({ type: 'varchar', length: 2048, nullable: true })
  endpoint: string | null;

  /** Path-style addressing (`endpoint/bucket/key`), as MinIO and most self-hosted S3s need. */
  @Column({ name: 'force_path_style', type: 'boolean', default: false })
  forcePathStyle: boolean;

  /** Prepended to every object key (e.g. `screenshots/`); '' for none. */
  @Column({ type: 'varchar', length: 512, default: '' })
  prefix: string;

  @Column({ type: 'varchar', length: 500, default: '' })
  description: string;

  /** `{"accessKeyId","secretAccessKey"}` as JSON, sealed by {@link SecretCipher.seal} with this id as context. */
  @Column({ name: 'credentials_sealed', type: 'text' })
  credentialsSealed: string;

  @TimestampColumn('created_at')
  createdAt: Date;
}
