import { Injectable } from '@nestjs/common';

/**
 * Whether this process is shutting down. Set first thing on SIGTERM/SIGINT, so `/ready` answers 503
 * from then on (CONTRACT.md, "Health and readiness") while in-flight work still finishes.
 */
@Injectable()
export class DrainState {
  private startedAt: Date | null = null;

  /** Marks the drain as started; idempotent. */
  begin(now = new Date()): void {
    this.startedAt ??= now;
  }

  get draining(): boolean {
    return this.startedAt !== null;
  }
}
