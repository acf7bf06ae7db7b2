import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A secret in a log line: an API key or signing secret with at least 8 characters of its random part. */
export const SECRET_IN_LOG = /sk_live_[A-Za-z0-9]{8,}|whsec_[A-Za-z0-9+/=_-]{8,}/;

/** The log lines under `dir` (every `*.log` file) that contain a {@link SECRET_IN_LOG}. */
export function scanLogsForSecrets(dir: string): string[] {
  const leaks: string[] = [];
  for (const name of readdirSync(dir).filter((n) => n.endsWith('.log'))) {
    for (const line of readFileSync(join(dir, name), 'utf8').split('\n')) {
      if (SECRET_IN_LOG.test(line)) leaks.push(`${name}: ${line.slice(0, 300)}`);
    }
  }
  return leaks;
}
