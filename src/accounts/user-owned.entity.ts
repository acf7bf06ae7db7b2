import { Column, Index, JoinColumn, ManyToOne } from 'typeorm';
import { User } from './user.entity';

/**
 * The columns of what a dashboard user holds (set-password links, dashboard sessions): the user, indexed
 * for "this user's rows"; deleting the user deletes it (`ON DELETE CASCADE`; CONTRACT.md, "Dashboard").
 * Entities extend it.
 */
export abstract class UserOwned {
  @Index()
  @Column({ name: 'user_id', type: 'varchar', length: 40 })
  userId: string;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id' })
  user?: User;
}
