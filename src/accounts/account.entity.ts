import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';
import type { Plan } from './plan';

/** A customer account: owns API keys, screenshot jobs and webhook endpoints. */
@Entity({ name: 'accounts' })
export class Account {
  /** `acc_…` */
  @PrimaryColumn({ type: 'varchar', length: 40 })
  id: string;

  /** Stored lower-cased; unique. */
  @Column({ type: 'varchar', length: 320, unique: true })
  email: string;

  @Column({ type: 'varchar', length: 16 })
  plan: Plan;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
