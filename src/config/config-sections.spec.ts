import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { environmentVariableNames, loadConfig } from './app-config';
import { captureSection } from './capture-config';
import { sectionVariableNames, validateSection } from './config-section';
import { dashboardSection } from './dashboard-config';
import { databaseSection } from './database-config';
import { limitsSection } from './limits-config';
import { monitorsSection } from './monitors-config';
import { recordingSection } from './recording-config';
import { redisSection } from './redis-config';
import { renderSection } from './render-config';
import { runsSection } from './runs-config';
import { serverSection } from './server-config';
import { storageSection } from './storage-config';
import { webhooksSection } from './webhooks-config';

const SECTIONS = {
  server: serverSection,
  database: databaseSection,
  redis: redisSection,
  storage: storageSection,
  capture: captureSection,
  recording: recordingSection,
  runs: runsSection,
  webhooks: webhooksSection,
  monitors: monitorsSection,
  render: renderSection,
  dashboard: dashboardSection,
  limits: limitsSection,
};

describe('configuration sections', () => {
  it('each variable belongs to exactly one section, and the sections together are every variable read', () => {
    const owned = Object.values(SECTIONS).flatMap((s) => sectionVariableNames(s.variables));
    expect(new Set(owned).size).toBe(owned.length);
    expect([...owned].sort()).toEqual(environmentVariableNames().filter((n) => !n.endsWith('_FILE')));
  });

  it('a section validates its own variables alone, with the same problem lines as the whole', () => {
    const { problems } = validateSection(webhooksSection.variables, { WEBHOOK_TIMEOUT_MS: '50', PORT: 'x' });
    expect(problems).toEqual(['WEBHOOK_TIMEOUT_MS="50": WEBHOOK_TIMEOUT_MS must not be less than 100']);
    expect(() => loadConfig({ WEBHOOK_TIMEOUT_MS: '50' })).toThrow(problems[0]);
  });

  it('composes every section into the one configuration', () => {
    const config = loadConfig({ RENDER_WAIT_MS: '100', MONITOR_TICK_MS: '500', REDIS_URL: 'redis://cache:6379' });
    expect(config).toMatchObject({ renderWaitMs: 100, monitors: { tickMs: 500 }, redisUrl: 'redis://cache:6379', port: 3000 });
  });

  it('reads process.env only in src/config/', () => {
    const readers: string[] = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (/\.ts$/.test(entry.name) && !/\.spec\.ts$/.test(entry.name) && /process\.env\b/.test(readFileSync(path, 'utf8')))
          readers.push(path);
      }
    };
    walk(join(__dirname, '..'));
    // The browser's child process inherits the environment as a whole: passed on, not configuration read.
    const passedOn = [join('src', 'browser', 'browser-sandbox.ts')];
    expect(readers.filter((p) => !p.includes(join('src', 'config')) && !passedOn.some((q) => p.endsWith(q)))).toEqual([]);
  });
});
