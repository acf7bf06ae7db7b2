import { Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { PublishedWithin, WorkLifecycle } from '../queue/work-lifecycle';
import { MonitorCheck } from './monitor-check.entity';

/** The states a check ends from. */
const OPEN: MonitorCheck['status'][] = ['pending'];

/**
 * The one owner of a monitor check's state (CONTRACT.md, "Monitors"; ARCHITECTURE.md, "Work
 * lifecycle"): `pending` → `baseline` | `unchanged` | `changed` | `failed`, never back, each end one
 * conditional `UPDATE … RETURNING` in the transaction that also stores its event and the monitor's
 * bookkeeping ({@link WorkLifecycle.end}), so a check never ends twice, whoever compares it.
 */
@Injectable()
export class MonitorCheckLifecycle extends WorkLifecycle<MonitorCheck> {
  protected readonly logger = new Logger(MonitorCheckLifecycle.name);

  constructor(@InjectRepository(MonitorCheck) checks: Repository<MonitorCheck>) {
    super(checks);
  }

  /**
   * Ends the still-`pending` check `id` with `changes` (its end state and results); `publish` runs in
   * the same transaction with the ended row (the monitor's bookkeeping and event). Returns the ended
   * check, or null when it had already ended. Throws what the database throws (nothing written then).
   */
  finish(
    id: string,
    changes: Partial<MonitorCheck> & { status: Exclude<MonitorCheck['status'], 'pending'>; completedAt: Date },
    publish: (manager: EntityManager, check: MonitorCheck) => Promise<PublishedWithin>,
  ): Promise<MonitorCheck | null> {
    return this.end(id, OPEN, changes, publish);
  }
}
