import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { captureBudgetMs } from '../../src/capture/capture-options';
import { loadConfig } from '../../src/config/app-config';
import { Metrics } from '../../src/metrics/metrics';
import { CAPTURE_QUEUE, RUN_QUEUE } from '../../src/queue/queues';
import { RUN_LEASE_GRACE_MS } from '../../src/runs/run.processor';
import { RUN_LIMITS } from '../../src/runs/run-steps';
import { helmSkeleton as skeleton } from '../support/helm-skeleton';

const root = join(__dirname, '../..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');

/** docs/security.md, "What an operator must configure": the deployment files ship the safe defaults. */
describe('deployment files: security defaults', () => {
  it('compose: Redis requires a password that every client uses, Redis is not published, the API binds 127.0.0.1 unless API_BIND says otherwise', () => {
    const compose = parse(read('docker-compose.yml'), { merge: true }) as { services: Record<string, any> };
    const { redis, api, worker, migrate } = compose.services;
    expect(redis.command).toEqual(expect.arrayContaining(['--requirepass', '${REDIS_PASSWORD:?set REDIS_PASSWORD}']));
    expect(redis.ports).toBeUndefined();
    expect(redis.environment.REDISCLI_AUTH).toMatch(/^\$\{REDIS_PASSWORD:\?/);
    for (const service of [api, worker, migrate])
      expect(service.environment.REDIS_URL).toMatch(/^redis:\/\/:\$\{REDIS_PASSWORD:\?[^}]*\}@redis:6379$/);
    expect(api.ports).toEqual(['${API_BIND:-127.0.0.1}:3000:3000']);
    expect(compose.services.postgres.ports).toBeUndefined();
  });

  describe('Helm chart', () => {
    const chart = 'deploy/helm/glimpse';
    const values = parse(read(`${chart}/values.yaml`));

    it('takes REDIS_URL (with its password) as a required secret, not as plain configuration', () => {
      expect(values.config.REDIS_URL).toBeUndefined();
      expect(Object.keys(values.secrets.values)).toContain('REDIS_URL');
      expect(read(`${chart}/templates/secret.yaml`)).toMatch(/REDIS_URL: \{\{ required "[^"]+" \.Values\.secrets\.values\.REDIS_URL/);
    });

    it('puts the workers behind a NetworkPolicy: DNS, the dependencies and the internet without private ranges, nothing else', () => {
      expect(values.networkPolicy.enabled).toBe(true);
      const text = read(`${chart}/templates/networkpolicy-worker.yaml`);
      expect(text).toMatch(/^\{\{- if \.Values\.networkPolicy\.enabled \}\}/);
      const [policy] = skeleton(text);
      expect(policy.kind).toBe('NetworkPolicy');
      expect(policy.spec.podSelector.matchLabels['app.kubernetes.io/component']).toBe('worker');
      expect(policy.spec.policyTypes).toEqual(['Ingress', 'Egress']);
      const blocks = policy.spec.egress.flatMap((rule: any) => rule.to ?? []).filter((peer: any) => peer.ipBlock);
      expect(blocks.map((b: any) => b.ipBlock.cidr)).toEqual(['0.0.0.0/0', '::/0']);
      for (const cidr of ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16', '100.64.0.0/10', '127.0.0.0/8']) {
        expect(values.networkPolicy.internetExcept).toContain(cidr);
      }
      for (const cidr of ['fc00::/7', 'fe80::/10', '::1/128']) expect(values.networkPolicy.internetExceptIPv6).toContain(cidr);
      const ports = values.networkPolicy.dependencies.flatMap((d: any) => d.ports.map((p: any) => p.port));
      expect(ports).toEqual(expect.arrayContaining([5432, 6379]));
    });
  });

  /** CONTRACT.md "Tenancy: fair share and isolation", "The browser"; docs/operations.md, "Chromium's sandbox". */
  describe('Chromium’s sandbox and locked-down containers', () => {
    const chart = 'deploy/helm/glimpse';
    const values = parse(read(`${chart}/values.yaml`));
    const template = (name: string) => read(`${chart}/templates/${name}`);

    it('the image runs as a non-root user with CHROMIUM_SANDBOX=on', () => {
      const dockerfile = read('Dockerfile').replace(/\\\n/g, ' ');
      expect([...dockerfile.matchAll(/^USER\s+(\S+)/gm)].pop()?.[1]).toBe('node');
      expect(dockerfile).toMatch(/^ENV\s.*\bCHROMIUM_SANDBOX=on\b/m);
    });

    it('compose: the worker gets a seccomp profile that lets Chromium create user namespaces, no service is privileged or gets CAP_SYS_ADMIN', () => {
      const compose = parse(read('docker-compose.yml'), { merge: true }) as { services: Record<string, any> };
      const { worker } = compose.services;
      const seccomp = (worker.security_opt as string[]).find((o) => o.startsWith('seccomp='))?.slice('seccomp='.length);
      expect(seccomp).toBe('./deploy/seccomp/chromium.json');
      expect(worker.security_opt).toContain('no-new-privileges:true');
      expect(worker.environment.CHROMIUM_SANDBOX).toBe('${CHROMIUM_SANDBOX:-on}');
      for (const [name, service] of Object.entries(compose.services)) {
        expect([name, service.privileged ?? false]).toEqual([name, false]);
        expect([name, service.cap_add ?? []]).toEqual([name, []]);
        expect([name, (service.security_opt ?? []).filter((o: string) => /unconfined/.test(o))]).toEqual([name, []]);
      }
      for (const name of ['api', 'worker', 'migrate']) expect(compose.services[name].cap_drop).toEqual(['ALL']);

      const profile = JSON.parse(read(seccomp!.slice(2)));
      const denied = new Set<string>(
        profile.syscalls.filter((rule: any) => rule.action !== 'SCMP_ACT_ALLOW').flatMap((rule: any) => rule.names),
      );
      expect(profile.defaultAction).toBe('SCMP_ACT_ALLOW');
      for (const needed of ['clone', 'clone3', 'unshare', 'chroot', 'seccomp', 'prctl'])
        expect([needed, denied.has(needed)]).toEqual([needed, false]);
      for (const refused of ['mount', 'bpf', 'keyctl', 'init_module', 'kexec_load', 'setns', 'perf_event_open', 'userfaultfd'])
        expect([refused, denied.has(refused)]).toEqual([refused, true]);
      // The 32-bit system call tables are filtered too (a deny list over x86_64 alone could be bypassed with them).
      expect(profile.archMap.find((a: any) => a.architecture === 'SCMP_ARCH_X86_64').subArchitectures).toEqual(
        expect.arrayContaining(['SCMP_ARCH_X86', 'SCMP_ARCH_X32']),
      );
    });

    it('Helm: every container drops all capabilities, cannot escalate, runs as non-root on a read-only root file system with emptyDirs to write to', () => {
      expect(values.containerSecurityContext).toEqual({
        allowPrivilegeEscalation: false,
        capabilities: { drop: ['ALL'] },
        readOnlyRootFilesystem: true,
        runAsNonRoot: true,
      });
      expect(values.podSecurityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
      const helpers = read(`${chart}/templates/_helpers.tpl`);
      expect(helpers).toMatch(/mountPath: \/tmp\n/);
      expect(helpers).toMatch(/mountPath: \/home\/node\n/);
      for (const name of ['deployment-api.yaml', 'deployment-worker.yaml', 'migration-job.yaml']) {
        const text = template(name);
        expect([name, /securityContext:\n\s+\{\{- toYaml \.Values\.containerSecurityContext \| nindent 12 \}\}/.test(text)]).toEqual([
          name,
          true,
        ]);
        expect([name, text.includes('{{- include "glimpse.writableMounts" . | nindent 12 }}')]).toEqual([name, true]);
        expect([name, text.includes('{{- include "glimpse.writableVolumes" . | nindent 8 }}')]).toEqual([name, true]);
        expect(text).not.toMatch(/privileged: true|SYS_ADMIN/);
      }
      // The workers' STORAGE_DIR is writable too; their seccomp profile is not the runtime's default,
      // which refuses the sandbox's user namespaces.
      const [worker] = skeleton(template('deployment-worker.yaml')) as any[];
      expect(worker.spec.template.spec.containers[0].volumeMounts).toEqual(
        expect.arrayContaining([{ name: 'files', mountPath: '/data/files' }]),
      );
      expect(values.worker.seccompProfile).toEqual({});
      expect(values.api.seccompProfile).toEqual({ type: 'RuntimeDefault' });
    });

    it('Helm: a NetworkPolicy for the API pods too: port 3000 in; DNS, the dependencies and the internet without private ranges out', () => {
      const text = template('networkpolicy-api.yaml');
      expect(text).toMatch(/^\{\{- if \.Values\.networkPolicy\.enabled \}\}/);
      const [policy] = skeleton(text);
      expect(policy.kind).toBe('NetworkPolicy');
      expect(policy.spec.podSelector.matchLabels['app.kubernetes.io/component']).toBe('api');
      expect(policy.spec.policyTypes).toEqual(['Ingress', 'Egress']);
      expect(policy.spec.ingress).toHaveLength(1);
      expect(policy.spec.ingress[0].ports).toEqual([{ port: 3000, protocol: 'TCP' }]);
      const blocks = policy.spec.egress.flatMap((rule: any) => rule.to ?? []).filter((peer: any) => peer.ipBlock);
      expect(blocks.map((b: any) => b.ipBlock.cidr)).toEqual(['0.0.0.0/0', '::/0']);
      expect(text).toContain('{{- toYaml .Values.networkPolicy.internetExcept | nindent 14 }}');
      expect(text).toContain('{{- with .Values.networkPolicy.dependencies }}');
    });

    it('Helm: an optional KEDA ScaledObject (off by default) scales the workers on busy + queued slots per worker, cooling down longer than the longest job', () => {
      expect(values.worker.keda.enabled).toBe(false);
      const text = template('keda-worker.yaml');
      expect(text).toMatch(/^\{\{- if \.Values\.worker\.keda\.enabled \}\}/);
      expect(text).toContain('{{- fail ');
      expect(template('deployment-worker.yaml')).toContain(
        '{{- if not (or .Values.worker.autoscaling.enabled .Values.worker.keda.enabled) }}',
      );
      const [scaled] = skeleton(text) as any[];
      expect(scaled).toMatchObject({ apiVersion: 'keda.sh/v1alpha1', kind: 'ScaledObject' });
      const [trigger] = scaled.spec.triggers;
      expect(trigger.type).toBe('prometheus');
      const query: string = trigger.metadata.query;
      // (`{ {{- $scope }}`: the action trims the space when rendered.)
      expect(query).toMatch(/sum\(glimpse_worker_slots\{ TEMPLATE,state="busy"\}\)/);
      expect(query).toContain(`glimpse_queue_jobs{namespace=TEMPLATE,queue=~"${CAPTURE_QUEUE}|${RUN_QUEUE}",state="waiting"}`);
      expect(new Metrics().registry.getSingleMetric('glimpse_queue_jobs')).toBeDefined();
      expect(text).toContain('cooldownPeriod: {{ $cooldown }}');
      expect(text).toContain('stabilizationWindowSeconds: {{ $cooldown }}');
      expect(text).toContain('{{- $cooldown := add (include "glimpse.longestJobSeconds" . | int) 30 }}');

      // The helper's arithmetic is the code's: a capture's largest budget and a run's.
      const helper =
        /\$t := div \(int \(\.Values\.config\.CAPTURE_TIMEOUT_MS \| default "(\d+)"\)\) 1000 -\}\}\n\{\{- max \(add \(mul (\d+) \$t\) (\d+)\) \(add (\d+) \$t (\d+)\) -\}\}/.exec(
          read(`${chart}/templates/_helpers.tpl`),
        );
      expect(helper).not.toBeNull();
      const [, defaultTimeoutMs, perTimeout, delayS, runS, graceS] = helper!.map(Number);
      expect(defaultTimeoutMs).toBe(loadConfig({}).captureTimeoutMs);
      for (const timeoutMs of [1000, 30_000, 120_000])
        expect((perTimeout * timeoutMs) / 1000 + delayS).toBe(captureBudgetMs(timeoutMs) / 1000);
      expect(runS).toBe(RUN_LIMITS.timeoutMs.max / 1000);
      expect(graceS).toBe(RUN_LEASE_GRACE_MS / 1000);
      const timeoutS = Number(values.config.CAPTURE_TIMEOUT_MS) / 1000;
      const longestS = Math.max(
        captureBudgetMs(timeoutS * 1000) / 1000,
        RUN_LIMITS.timeoutMs.max / 1000 + timeoutS + RUN_LEASE_GRACE_MS / 1000,
      );
      expect(Math.max(perTimeout * timeoutS + delayS, runS + timeoutS + graceS)).toBe(longestS);
    });

    it('npm run start:local (and only it) runs Chromium without its sandbox, as the README says', () => {
      const scripts = JSON.parse(read('package.json')).scripts as Record<string, string>;
      expect(scripts['start:local']).toMatch(/\bCHROMIUM_SANDBOX=off\b/);
      expect(scripts.start).not.toMatch(/CHROMIUM_SANDBOX/);
      expect(read('README.md')).toMatch(/`npm run start:local` is `npm start` with [^.]*`CHROMIUM_SANDBOX=off`/);
      expect(existsSync(join(root, 'deploy/seccomp/chromium.json'))).toBe(true);
    });
  });
});
