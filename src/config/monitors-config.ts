import { Transform } from 'class-transformer';
import { IsInt, Max, Min } from 'class-validator';
import { configSection, toInt } from './config-section';

/** The monitors section's variables (CONTRACT.md, "Configuration (environment)" and "Monitors"). */
class MonitorsVariables {
  /** Shortest time between two scheduled checks of one monitor, s (CONTRACT.md, "Monitors"). */
  @Transform(toInt) @IsInt() @Min(1) @Max(86400) MONITOR_MIN_INTERVAL_S = 300;
  /** Failed checks in a row after which a monitor pauses (`failing`). */
  @Transform(toInt) @IsInt() @Min(1) @Max(1000) MONITOR_PAUSE_AFTER_FAILURES = 5;
  /** How often a worker looks for monitors whose check is due (a periodic job of the `monitors` queue: one worker per tick), ms. */
  @Transform(toInt) @IsInt() @Min(100) @Max(60000) MONITOR_TICK_MS = 2000;
  /** Monitor image comparisons run at once per process, each in a worker thread (CONTRACT.md, "Tenancy: fair share and isolation"). */
  @Transform(toInt) @IsInt() @Min(1) @Max(32) COMPARE_CONCURRENCY = 1;
}

/** Monitors' part of `AppConfig`. */
export interface MonitorsConfig {
  /**
   * Monitors (CONTRACT.md, "Monitors"): shortest schedule interval (s), failed checks in a row before
   * pausing, scheduler tick (ms), image comparisons at once per process (`COMPARE_CONCURRENCY`, each in
   * a worker thread; CONTRACT.md, "Tenancy: fair share and isolation").
   */
  monitors: { minIntervalS: number; pauseAfterFailures: number; tickMs: number; compareConcurrency: number };
}

/** The monitors section (docs/configuration.md). */
export const monitorsSection = configSection({
  variables: MonitorsVariables,
  read: (raw): MonitorsConfig => ({
    monitors: {
      minIntervalS: raw.MONITOR_MIN_INTERVAL_S,
      pauseAfterFailures: raw.MONITOR_PAUSE_AFTER_FAILURES,
      tickMs: raw.MONITOR_TICK_MS,
      compareConcurrency: raw.COMPARE_CONCURRENCY,
    },
  }),
});
