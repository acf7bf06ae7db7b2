import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { Client } from 'pg';
import type { EntityManager } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { transactionRows } from '../sql/sql';

/** The PostgreSQL `LISTEN/NOTIFY` channel on which the end of a capture job or run is announced; the payload is its id. */
export const WORK_ENDED_CHANNEL = 'glimpse_work_ended';

/**
 * Announces, within `manager`'s transaction, that the job or run `id` ended: PostgreSQL delivers the
 * notification at the commit (and never for a rolled-back transaction), so a waiter that hears it reads
 * the ended row. Call it in the transaction that writes the final status.
 */
export async function notifyWorkEnded(manager: EntityManager, id: string): Promise<void> {
  await transactionRows(manager, 'SELECT pg_notify($1, $2)', [WORK_ENDED_CHANNEL, id]);
}

/** The PostgreSQL `LISTEN/NOTIFY` channel on which a cancel asked of a running run is announced; the payload is its id. */
export const CANCEL_REQUESTED_CHANNEL = 'glimpse_cancel_requested';

/**
 * Announces, within `manager`'s transaction, that the customer asked to cancel the running run `id`
 * (delivered at the commit, never for a rolled-back transaction). Call it in the transaction that
 * writes `cancel_requested_at`; the worker running the run hears it ({@link WorkEndWaiter.watchCancel}).
 */
export async function notifyCancelRequested(manager: EntityManager, id: string): Promise<void> {
  await transactionRows(manager, 'SELECT pg_notify($1, $2)', [CANCEL_REQUESTED_CHANNEL, id]);
}

/** A watch of a running run's cancel ({@link WorkEndWaiter.watchCancel}). */
export interface CancelWatch {
  /** Whether the listening connection is up now; when it is not, this also starts reopening it. */
  listening(): boolean;
  /** Ends the watch. */
  stop(): void;
}

/** One waiter's wake-up: set when a notification for its id arrived, whether or not it was waiting then. */
class Wakeup {
  private signalled = false;
  private resolve: (() => void) | null = null;

  signal(): void {
    this.signalled = true;
    this.resolve?.();
  }

  /** Resolves at the next signal (at once if one arrived since the last call) or after `ms`. */
  wait(ms: number): Promise<void> {
    if (this.signalled) {
      this.signalled = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        this.resolve = null;
        this.signalled = false;
        resolve();
      };
      const timer = setTimeout(finish, ms);
      this.resolve = finish;
    });
  }
}

/**
 * Waits for capture jobs and runs to end without polling (CONTRACT.md, "Synchronous answers" and
 * "Render links"): one PostgreSQL connection per process `LISTEN`s on {@link WORK_ENDED_CHANNEL}
 * (opened at boot in the HTTP process, {@link openAhead}, else at the first wait) and wakes the
 * waiters of the id it hears. Each waiter subscribes first, then reads the row, so an end committed
 * between the two is never missed. When the listener connection cannot be opened, a wait reads the
 * row once and returns (the caller answers as if the time ran out); a broken connection is reopened
 * at the next wait.
 *
 * The same connection `LISTEN`s on {@link CANCEL_REQUESTED_CHANNEL}, for the worker running a run to
 * hear its cancel ({@link watchCancel}, docs/runs.md "Cancel").
 */
@Injectable()
export class WorkEndWaiter implements OnModuleDestroy {
  private readonly logger = new Logger(WorkEndWaiter.name);
  private readonly waiters = new Map<string, Set<Wakeup>>();
  /** Cancel watchers by run id: called with `true` when the cancel was heard, `false` when one may have been missed. */
  private readonly cancelWatchers = new Map<string, Set<(heard: boolean) => void>>();
  private listener: Promise<Client> | null = null;
  /** Whether the listening connection is up (connected and listening). */
  private up = false;
  private closed = false;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  /**
   * Resolves with `read()`'s first non-null answer, read now and after each notification for `id`,
   * or null when `timeoutMs` (ms) pass without one. `read` reads the row (e.g. the job, when ended);
   * its errors propagate.
   */
  async waitForEnd<T>(id: string, timeoutMs: number, read: () => Promise<T | null>): Promise<T | null> {
    const deadline = Date.now() + timeoutMs;
    const wakeup = new Wakeup();
    let subscribers = this.waiters.get(id);
    if (!subscribers) this.waiters.set(id, (subscribers = new Set()));
    subscribers.add(wakeup);
    try {
      const listening = await this.listening().then(
        () => true,
        (err: unknown) => {
          this.logger.warn(`Cannot listen for ended work (${(err as Error).message}); answering without waiting`);
          return false;
        },
      );
      for (;;) {
        const ended = await read();
        if (ended !== null) return ended;
        const remaining = deadline - Date.now();
        if (!listening || remaining <= 0) return null;
        await wakeup.wait(remaining);
      }
    } finally {
      subscribers.delete(wakeup);
      if (!subscribers.size && this.waiters.get(id) === subscribers) this.waiters.delete(id);
    }
  }

  /**
   * Watches for a cancel of the run `id` (CONTRACT.md, "Browser session runs", cancel): `onSignal(true)`
   * when one is announced on {@link CANCEL_REQUESTED_CHANNEL}; `onSignal(false)` when the listening
   * connection opened or broke, as a cancel may have been missed then (the caller reads the row).
   * Opens the connection when it is not open; never throws (a failure to open is logged, and
   * {@link CancelWatch.listening} answers false until it is open).
   */
  watchCancel(id: string, onSignal: (heard: boolean) => void): CancelWatch {
    let watchers = this.cancelWatchers.get(id);
    if (!watchers) this.cancelWatchers.set(id, (watchers = new Set()));
    watchers.add(onSignal);
    const open = () => {
      if (this.listener || this.closed) return;
      void this.listening().then(
        () => onSignal(false),
        (err: unknown) => this.logger.warn(`Cannot listen for run cancels (${(err as Error).message})`),
      );
    };
    open();
    return {
      listening: () => {
        open();
        return this.up;
      },
      stop: () => {
        watchers.delete(onSignal);
        if (!watchers.size && this.cancelWatchers.get(id) === watchers) this.cancelWatchers.delete(id);
      },
    };
  }

  /**
   * Starts opening the listening connection now instead of at the first wait: the HTTP process calls
   * it at boot (`configureApp`), so the first `Prefer: wait` or render-link miss after a start does not
   * pay the connect, which on a loaded machine took longer than `DEPENDENCY_TIMEOUT_MS` (and such a wait
   * answers at once, as if its time ran out). Never throws: a failure is logged, and the next wait
   * opens the connection again.
   */
  openAhead(): void {
    this.listening().catch((err: unknown) =>
      this.logger.warn(`Cannot listen for ended work yet (${(err as Error).message}); the next wait opens the connection`),
    );
  }

  /** The process's listening connection, opened on first use and again after it broke. */
  private listening(): Promise<Client> {
    if (this.closed) return Promise.reject(new Error('shutting down'));
    if (!this.listener) {
      const client = new Client({ connectionString: this.config.databaseUrl, connectionTimeoutMillis: this.config.dependencyTimeoutMs });
      const drop = (err?: Error) => {
        if (err) this.logger.warn(`The ended-work listener connection broke: ${err.message}`);
        if (this.listener === opening) {
          this.listener = null;
          this.up = false;
        }
        client.removeAllListeners('notification');
        // Waiters read their row again: an end (or a cancel) may have been missed while the connection was down.
        for (const subscribers of this.waiters.values()) for (const wakeup of subscribers) wakeup.signal();
        for (const watchers of this.cancelWatchers.values()) for (const watcher of watchers) watcher(false);
      };
      client.on('notification', (message) => {
        if (!message.payload) return;
        if (message.channel === CANCEL_REQUESTED_CHANNEL) {
          for (const watcher of this.cancelWatchers.get(message.payload) ?? []) watcher(true);
          return;
        }
        for (const wakeup of this.waiters.get(message.payload) ?? []) wakeup.signal();
      });
      client.on('error', (err) => drop(err));
      client.on('end', () => drop());
      const opening: Promise<Client> = client
        .connect()
        .then(() => client.query(`LISTEN ${CANCEL_REQUESTED_CHANNEL}`))
        .then(() => client.query(`LISTEN ${WORK_ENDED_CHANNEL}`))
        .then(() => {
          if (this.listener === opening) this.up = true;
          return client;
        })
        .catch(async (err: unknown) => {
          if (this.listener === opening) this.listener = null;
          await client.end().catch(() => undefined);
          throw err;
        });
      this.listener = opening;
    }
    return this.listener;
  }

  async onModuleDestroy(): Promise<void> {
    this.closed = true;
    const listener = this.listener;
    this.listener = null;
    this.up = false;
    if (listener) await listener.then((client) => client.end()).catch(() => undefined);
  }
}
