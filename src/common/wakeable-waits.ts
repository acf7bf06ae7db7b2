/**
 * Waits of one process that something may end early: each {@link wait} ends after its time, at the
 * next {@link wakeAll} (e.g. a job of this process ended), or once `stop` aborts (the process is
 * stopping), whichever is first: how a processor that looks at PostgreSQL again after a while is woken
 * by what happened in its own process.
 */
export class WakeableWaits {
  private readonly waiters = new Set<() => void>();

  constructor(private readonly stop: AbortSignal) {}

  /** Resolves after `ms` (ms), at the next {@link wakeAll}, or when `stop` aborts; never rejects. */
  wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        this.stop.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiters.add(done);
      this.stop.addEventListener('abort', done, { once: true });
    });
  }

  /** Ends every wait pending now. */
  wakeAll(): void {
    for (const done of [...this.waiters]) done();
  }
}
