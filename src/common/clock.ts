/** Source of the current time, injectable so tests can stand at a month's last millisecond. */
export abstract class Clock {
  abstract now(): Date;
}

/** The wall clock. */
export class SystemClock extends Clock {
  now(): Date {
    return new Date();
  }
}
