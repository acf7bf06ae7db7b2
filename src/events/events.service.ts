import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { Clock } from '../common/clock';
import { newId } from '../common/ids';
import { transactionRows } from '../sql/sql';
import { EventRecord } from './event.entity';
import { EventDataMap, EventType } from './event-types';

/** The row of one event (the columns of {@link EventRecord}). */
const INSERT_EVENT_SQL = 'INSERT INTO events (id, account_id, type, data, created_at) VALUES ($1, $2, $3, $4, $5)';

/** The event envelope sent to receivers (spec section 2.5 plus CONTRACT.md's `id`). */
export interface EventEnvelope<T extends EventType = EventType> {
  id: string;
  type: T;
  /** ISO 8601 UTC with milliseconds. */
  createdAt: string;
  data: EventDataMap[T];
}

/**
 * A consumer of published events (the webhooks fan-out). `fanOut` runs inside the transaction that
 * stores the event, so whatever it writes commits or rolls back with the event; it returns work to do
 * after the commit (for example enqueueing deliveries), or nothing.
 */
export interface EventSink {
  fanOut(event: EventRecord, manager: EntityManager): Promise<(() => Promise<void>) | void>;
}

/** Stores events and hands them to the registered sinks in the same transaction. */
@Injectable()
export class EventsService {
  private readonly sinks: EventSink[] = [];

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly clock: Clock,
  ) {}

  /** Registers a sink; called by consumer modules at start-up. */
  registerSink(sink: EventSink): void {
    this.sinks.push(sink);
  }

  /**
   * Stores one event for an account and fans it out in one transaction, then runs the sinks'
   * after-commit work. `data` has the shape {@link EventDataMap} gives the type, the one the OpenAPI
   * `webhooks` section documents. Throws when the database write fails (nothing is stored then).
   */
  async publish<T extends EventType>(accountId: string, type: T, data: EventDataMap[T]): Promise<EventRecord> {
    const { event, afterCommit } = await this.dataSource.transaction((manager) => this.publishWithin(manager, accountId, type, data));
    await afterCommit();
    return event;
  }

  /**
   * Stores one event and fans it out inside the caller's transaction, so the event commits or rolls
   * back with the caller's own change (a job's state and its `screenshot.*` event, for example).
   * Returns the stored record and the sinks' after-commit work, which the caller runs once its
   * transaction has committed (it enqueues the webhook deliveries). `manager` must be in a
   * transaction (`DataSource.transaction`'s). Throws when a write fails.
   */
  async publishWithin<T extends EventType>(
    manager: EntityManager,
    accountId: string,
    type: T,
    data: EventDataMap[T],
  ): Promise<{ event: EventRecord; afterCommit: () => Promise<void> }> {
    const event = manager.create(EventRecord, { id: newId('event'), accountId, type, data, createdAt: this.clock.now() });
    // A prepared statement rather than TypeORM's insert builder: every ended job stores one (docs/performance.md#captures).
    await transactionRows(manager, INSERT_EVENT_SQL, [event.id, accountId, type, JSON.stringify(data), event.createdAt]);
    const pending: (() => Promise<void>)[] = [];
    for (const sink of this.sinks) {
      const after = await sink.fanOut(event, manager);
      if (after) pending.push(after);
    }
    return {
      event,
      afterCommit: async () => {
        for (const run of pending) await run();
      },
    };
  }

  /** The envelope of an event, as receivers see it. */
  static envelope(event: EventRecord): EventEnvelope {
    return { id: event.id, type: event.type, createdAt: event.createdAt.toISOString(), data: event.data as EventDataMap[EventType] };
  }
}
