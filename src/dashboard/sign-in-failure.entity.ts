import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { TimestampColumn } from '../common/timestamp-column';

/**
 * One failed dashboard sign-in (counted before its password is checked, removed when it was right);
 * the sign-in limits count these per email and per client key (IPv4 address or IPv6 /64) over 15 min.
 */
@Entity({ name: 'sign_in_failures' })
@Index(['email', 'ip', 'failedAt'])
@Index(['ip', 'failedAt'])
export class SignInFailure {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  /** As typed, trimmed and lower-cased (may name no user). */
  @Column({ type: 'varchar', length: 320 })
  email: string;

  @Column({ type: 'varchar', length: 64 })
  ip: string;

  @Index()
  @TimestampColumn('failed_at')
  failedAt: Date;
}
