import { Clock } from '../../src/common/clock';

/** A clock the test sets and moves; install with `override: (b) => b.overrideProvider(Clock).useValue(clock)`. */
export class FakeClock extends Clock {
  private ms: number;

  constructor(iso: string) {
    super();
    this.ms = Date.parse(iso);
  }

  now(): Date {
    return new Date(this.ms);
  }

  set(iso: string): void {
    this.ms = Date.parse(iso);
  }

  advance(ms: number): void {
    this.ms += ms;
  }
}
