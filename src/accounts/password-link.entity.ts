import { CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';
import { UserOwned } from './user-owned.entity';
import { TimestampColumn } from '../common/timestamp-column';

/**
 * A one-time set-password link (CLI `user:create`, `user:reset-password`, dashboard invites): only the
 * SHA-256 of its token is stored. Works once and expires after 24 h (CONTRACT.md, "Dashboard").
 */
@Entity({ name: 'password_links' })
export class PasswordLink extends UserOwned {
  /** Hex SHA-256 of the token in the link. */
  @PrimaryColumn({ name: 'token_hash', type: 'char', length: 64 })
  tokenHash: string;

  @TimestampColumn('expires_at')
  expiresAt: Date;

  @TimestampColumn('used_at', { nullable: true })
  usedAt: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
