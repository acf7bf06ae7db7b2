import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import type { EventDataMap, EventType } from './event-types';
import { TimestampColumn } from '../common/timestamp-column';

/** One occurrence of an event, stored once and then fanned out (ARCHITECTURE.md, events/). */
@Entity({ name: 'events' })
@Index(['accountId', 'createdAt'])
export class EventRecord {
  /** `evt_…` */
  @PrimaryColumn({ type: 'varchar', length: 40 })
  id: string;

  @Column({ name: 'account_id', type: 'varchar', length: 40 })
  accountId: string;

  @Column({ type: 'varchar', length: 64 })
  type: EventType;

  /** Event-specific fields (spec section 6.1). */
  @Column({ type: 'jsonb' })
  data: EventDataMap[EventType];

  /** Set from the service clock, so the envelope's `createdAt` is exact to the millisecond. */
  @TimestampColumn('created_at')
  createdAt: Date;
}
