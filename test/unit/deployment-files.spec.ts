import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { captureBudgetMs } from '../../src/capture/capture-options';
import { environmentVariableNames, loadConfig } from '../../src/config/app-config';
import { helmSkeleton as skeleton } from '../support/helm-skeleton';

const root = join(__dirname, '../..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');
const KNOWN = new Set(environmentVariableNames());
const SECRET_NAME = /SECRET|PASSWORD|TOKEN|ACCESS_KEY/;

/** Seconds of a compose duration (`90s`, `1m30s`). */
function seconds(duration: string): number {
  let total = 0;
  for (const [, n, unit] of duration.matchAll(/(\d+)(h|m|s)/g)) total += Number(n) * { h: 3600, m: 60, s: 1 }[unit as 'h' | 'm' | 's'];
  return total;
}

/**
 * The deployment files cannot run here (no Docker engine, no Kubernetes, no helm binary in the
 * registries): they are parsed and checked against the configuration and the requirements.
 */
describe('deployment files', () => {
  const defaultBudgetS = captureBudgetMs(loadConfig({}).captureTimeoutMs) / 1000;

  it('Dockerfile: Node 24 on Debian, browser/fonts/ffmpeg from apt, non-root, tini as PID 1, exec node, HEALTHCHECK, known ENV names', () => {
    const dockerfile = read('Dockerfile').replace(/\\\n/g, ' ');
    const froms = [...dockerfile.matchAll(/^FROM\s+(\S+)/gm)].map((m) => m[1]);
    expect(froms.length).toBeGreaterThan(0);
    for (const image of froms) expect(image).toMatch(/^node:24-(bookworm|trixie)-slim$/);
    const install = /apt-get install[^\n]*/.exec(dockerfile)?.[0] ?? '';
    for (const pkg of ['tini', 'chromium-headless-shell', 'ffmpeg', 'fonts-noto-cjk', 'fonts-noto-color-emoji'])
      expect(install).toContain(pkg);
    const user = [...dockerfile.matchAll(/^USER\s+(\S+)/gm)].pop()?.[1];
    expect(user).toBeDefined();
    expect(['root', '0']).not.toContain(user);
    expect(JSON.parse(/^ENTRYPOINT\s+(\[.*\])/m.exec(dockerfile)![1])).toEqual(['/usr/bin/tini', '--']);
    const cmd = JSON.parse(/^CMD\s+(\[.*\])/m.exec(dockerfile)![1]) as string[];
    expect(cmd[0]).toBe('node');
    const healthcheck = JSON.parse(/^HEALTHCHECK.*CMD\s+(\[.*\])/m.exec(dockerfile)![1]) as string[];
    expect(healthcheck.slice(0, 2)).toEqual(['node', 'dist/health/healthcheck.js']);
    expect(existsSync(join(root, 'src/health/healthcheck.ts'))).toBe(true);
    const envNames = [...dockerfile.matchAll(/^ENV\s+(.*)$/gm)].flatMap((m) => [...m[1].matchAll(/([A-Z_][A-Z0-9_]*)=/g)].map((n) => n[1]));
    expect(envNames.length).toBeGreaterThan(0);
    expect(envNames.filter((n) => !KNOWN.has(n))).toEqual([]);
    const ignored = read('.dockerignore')
      .split('\n')
      .map((l) => l.trim());
    for (const entry of ['.git', 'node_modules', '.env', 'dist']) expect(ignored).toContain(entry);
  });

  it('docker-compose.yml: one-shot migrate first, health checks, restart policy, grace beyond the capture budget, no hard-coded secrets', () => {
    const compose = parse(read('docker-compose.yml'), { merge: true }) as {
      services: Record<string, any>;
      volumes: Record<string, unknown>;
    };
    const { services } = compose;
    expect(Object.keys(services).sort()).toEqual(['api', 'migrate', 'postgres', 'redis', 'worker']);
    expect(services.migrate.command).toEqual(['node', 'dist/database/run-migrations.js']);
    expect(services.migrate.restart).toBe('no');
    for (const name of ['api', 'worker']) {
      expect(services[name].depends_on.migrate).toEqual({ condition: 'service_completed_successfully' });
      expect(services[name].healthcheck.test).toEqual(['CMD', 'node', 'dist/health/healthcheck.js']);
    }
    for (const name of ['api', 'worker', 'postgres', 'redis']) {
      expect(services[name].restart).toBe('unless-stopped');
      expect(services[name].healthcheck).toBeDefined();
    }
    expect(services.worker.command).toEqual(['node', 'dist/worker.js']);
    expect(seconds(services.worker.stop_grace_period)).toBeGreaterThan(defaultBudgetS);
    expect(seconds(services.api.stop_grace_period)).toBeGreaterThan(10);
    // Results: a volume shared by the API and the workers (or S3 through the same variables).
    expect(services.api.volumes).toContain('files:/data/files');
    expect(services.worker.volumes).toContain('files:/data/files');

    for (const name of ['api', 'worker', 'migrate']) {
      const env = services[name].environment as Record<string, string>;
      expect(Object.keys(env).filter((n) => !KNOWN.has(n))).toEqual([]);
      for (const [key, value] of Object.entries(env)) {
        if (SECRET_NAME.test(key)) expect(value).toMatch(/^\$\{[A-Z0-9_]+(:[-?][^}]*)?\}$/);
      }
      // The database password comes from the environment, not from this file.
      expect(env.DATABASE_URL).toMatch(/^postgres:\/\/glimpse:\$\{POSTGRES_PASSWORD:\?[^}]*\}@postgres:5432\/glimpse$/);
      expect(env.WEBHOOK_SECRET_KEY).toMatch(/^\$\{WEBHOOK_SECRET_KEY:\?/);
    }
    expect(services.postgres.environment.POSTGRES_PASSWORD).toMatch(/^\$\{POSTGRES_PASSWORD:\?/);
  });

  describe('Helm chart deploy/helm/glimpse', () => {
    const chart = 'deploy/helm/glimpse';
    const templates = readdirSync(join(root, chart, 'templates')).filter((f) => f.endsWith('.yaml'));
    const template = (name: string) => read(`${chart}/templates/${name}`);

    it('has the chart metadata and values with configuration names only', () => {
      const meta = parse(read(`${chart}/Chart.yaml`));
      expect(meta).toMatchObject({ apiVersion: 'v2', name: 'glimpse', type: 'application' });
      const values = parse(read(`${chart}/values.yaml`));
      const names = [...Object.keys(values.config), ...Object.keys(values.secrets.values)];
      expect(names.filter((n) => !KNOWN.has(n))).toEqual([]);
      for (const name of Object.keys(values.config)) expect(SECRET_NAME.test(name)).toBe(false);
      expect(values.worker.terminationGracePeriodSeconds).toBeGreaterThan(defaultBudgetS);
    });

    it('every template is YAML around its template actions, and names only known variables', () => {
      for (const name of templates) {
        const docs = skeleton(template(name));
        expect(docs.length).toBeGreaterThan(0);
        const envNames = [...template(name).matchAll(/- name: ([A-Z][A-Z0-9_]+)\s*$/gm)].map((m) => m[1]);
        expect(envNames.filter((n) => !KNOWN.has(n))).toEqual([]);
      }
    });

    it('runs the API and the workers with probes on /health and /ready, migrations as a pre-install/pre-upgrade hook', () => {
      const [api] = skeleton(template('deployment-api.yaml')) as any[];
      const apiContainer = api.spec.template.spec.containers[0];
      expect(api.kind).toBe('Deployment');
      expect(apiContainer.command).toEqual(['node', 'dist/main.js']);
      expect(apiContainer.livenessProbe.httpGet.path).toBe('/health');
      expect(apiContainer.readinessProbe.httpGet.path).toBe('/ready');

      const [worker] = skeleton(template('deployment-worker.yaml')) as any[];
      const workerContainer = worker.spec.template.spec.containers[0];
      expect(workerContainer.command).toEqual(['node', 'dist/worker.js']);
      expect(workerContainer.livenessProbe.httpGet).toEqual({ path: '/health', port: 'health' });
      expect(workerContainer.readinessProbe.httpGet).toEqual({ path: '/ready', port: 'health' });
      expect(workerContainer.ports).toEqual([{ name: 'health', containerPort: 3001 }]);

      const [job] = skeleton(template('migration-job.yaml')) as any[];
      expect(job.kind).toBe('Job');
      expect(job.metadata.annotations['helm.sh/hook']).toBe('pre-install,pre-upgrade');
      expect(job.spec.template.spec.containers[0].command).toEqual(['node', 'dist/database/run-migrations.js']);
      // What the hook reads exists before it runs.
      for (const name of ['configmap.yaml', 'secret.yaml']) {
        const [doc] = skeleton(template(name)) as any[];
        expect(doc.metadata.annotations['helm.sh/hook']).toBe('pre-install,pre-upgrade');
        expect(Number(doc.metadata.annotations['helm.sh/hook-weight'])).toBeLessThan(
          Number(job.metadata.annotations['helm.sh/hook-weight']),
        );
      }

      expect((skeleton(template('hpa-worker.yaml'))[0] as any).kind).toBe('HorizontalPodAutoscaler');
      expect(template('hpa-worker.yaml')).toMatch(/^\{\{- if \.Values\.worker\.autoscaling\.enabled \}\}/);
      expect((skeleton(template('servicemonitor.yaml'))[0] as any).kind).toBe('ServiceMonitor');
      expect(template('servicemonitor.yaml')).toMatch(/^\{\{- if \.Values\.metrics\.serviceMonitor\.enabled \}\}/);
      expect((skeleton(template('service.yaml')) as any[]).map((d) => d.kind)).toEqual(['Service', 'Service']);
    });
  });
});
