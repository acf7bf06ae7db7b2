import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
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
});
