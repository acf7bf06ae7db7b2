import { Column, CreateDateColumn, Entity, Index } from 'typeorm';
import { AccountOwned } from './account-owned.entity';

/** Dashboard roles (CONTRACT.md, "Dashboard"): both manage keys, webhooks and captures; only owners manage members. */
export const USER_ROLES = ['owner', 'member'] as const;
export type UserRole = (typeof USER_ROLES)[number];

/**
 * A person who signs in to the dashboard; belongs to exactly one account. Its id (`usr_…`) and account are
 * {@link AccountOwned}'s columns.
 */
@Entity({ name: 'users' })
@Index(['accountId'])
export class User extends AccountOwned {
  /** Stored trimmed and lower-cased; unique across accounts (sign-in is by email). */
  @Column({ type: 'varchar', length: 320, unique: true })
  email: string;

  /** argon2id PHC string; null until the user follows a set-password link. */
  @Column({ name: 'password_hash', type: 'text', nullable: true })
  passwordHash: string | null;

  @Column({ type: 'varchar', length: 16 })
  role: UserRole;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
