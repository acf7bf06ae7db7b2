import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { UserOwned } from '../accounts/user-owned.entity';
import { TimestampColumn } from '../common/timestamp-column';

/**
 * A signed-in dashboard session (CONTRACT.md, "Dashboard"): the cookie carries a random token, only
 * its SHA-256 is stored. Ends after 12 h without a request, at sign-out, or when revoked from the
 * Account page.
 */
@Entity({ name: 'dashboard_sessions' })
export class DashboardSession extends UserOwned {
  /** `ses_…`: names the session on the Account page (never the token). */
  @PrimaryColumn({ type: 'varchar', length: 40 })
  id: string;

  /** Hex SHA-256 of the cookie's token. */
  @Index({ unique: true })
  @Column({ name: 'token_hash', type: 'char', length: 64 })
  tokenHash: string;

  /** The synchronizer token every state-changing request of this session must carry. */
  @Column({ name: 'csrf_token', type: 'varchar', length: 64 })
  csrfToken: string;

  @Column({ name: 'user_agent', type: 'varchar', length: 256 })
  userAgent: string;

  @Column({ type: 'varchar', length: 64 })
  ip: string;

  @TimestampColumn('created_at')
  createdAt: Date;

  /** Last request; the session is idle-expired 12 h after it. */
  @TimestampColumn('last_seen_at')
  lastSeenAt: Date;
}
