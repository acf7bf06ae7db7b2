/**
 * `npm run bench:schedule-check`: the CPU time of checking a monitor's schedule on a write
 * (`checkSchedule`, docs/monitors.md "The monitor"), the cost any API key can make the service pay per
 * `POST /v1/monitors` or `PATCH`. For each schedule below, in a fresh croner state: the first call
 * (time-zone data loaded, `Intl` formatters built) and then BENCH_ROUNDS more calls (default 50), each
 * at a `now` 7 days later than the last, so the window crosses the year's offset changes. Printed: CPU
 * ms (`process.cpuUsage`, user + system) of the first call and per call after it, and the load average.
 * Figures only, no assertions.
 */
import { checkSchedule } from '../src/monitors/monitor-schedule';
import { envNumber, loadAverage } from './bench-support';

const ROUNDS = envNumber('BENCH_ROUNDS', 50);
const MIN_INTERVAL_S = 300;
const START = Date.parse('2026-11-25T10:02:30.000Z');
const WEEK_MS = 7 * 86_400_000;

const SCHEDULES: { cron: string; timezone: string }[] = [
  { cron: '0 9 * * 1-5', timezone: 'UTC' },
  { cron: '*/5 * * * *', timezone: 'UTC' },
  { cron: '0 9 * * 1-5', timezone: 'Europe/Berlin' },
  { cron: '*/5 * * * *', timezone: 'America/New_York' },
  { cron: '0 0 1 1 *', timezone: 'Asia/Tokyo' },
  { cron: '30 2 * * *', timezone: 'Europe/London' },
  { cron: '0,58 1 * * *', timezone: 'America/New_York' },
];

/** CPU ms (user + system) of `fn`. */
function cpuMs(fn: () => void): number {
  const before = process.cpuUsage();
  fn();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

console.log(`load average before: ${loadAverage()}`);
for (const { cron, timezone } of SCHEDULES) {
  let verdict = '';
  const first = cpuMs(() => {
    const { errors } = checkSchedule({ cron, timezone }, MIN_INTERVAL_S, new Date(START));
    verdict = errors.length ? 'refused' : 'accepted';
  });
  let total = 0;
  for (let i = 1; i <= ROUNDS; i++) total += cpuMs(() => checkSchedule({ cron, timezone }, MIN_INTERVAL_S, new Date(START + i * WEEK_MS)));
  console.log(
    `${JSON.stringify(cron).padEnd(16)} ${timezone.padEnd(18)} ${verdict.padEnd(8)} first ${first.toFixed(2)} ms CPU, then ${(total / ROUNDS).toFixed(2)} ms CPU per call`,
  );
}
console.log(`load average after: ${loadAverage()}`);
