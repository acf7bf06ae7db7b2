import { browserEnvironment, sandboxSupport } from './browser-sandbox';

describe('the browser’s environment and sandbox', () => {
  it('passes only what Chromium needs, never the service’s credentials', () => {
    const env = browserEnvironment({
      PATH: '/usr/bin',
      HOME: '/home/node',
      LANG: 'C.UTF-8',
      DATABASE_URL: 'postgres://u:p@db/glimpse',
      REDIS_URL: 'redis://:pw@redis:6379',
      WEBHOOK_SECRET_KEY: 'a'.repeat(64),
      S3_SECRET_ACCESS_KEY: 'secret',
      METRICS_TOKEN: 'token-token-token',
      NODE_OPTIONS: '--require /tmp/x.js',
    });
    expect(env).toEqual({ PATH: '/usr/bin', HOME: '/home/node', LANG: 'C.UTF-8' });
  });

  it('turns the sandbox on only for a non-root process with unprivileged user namespaces', () => {
    const probe = (uid: number, files: Record<string, string>) => ({ uid, read: (path: string) => files[path] ?? null });
    expect(sandboxSupport(probe(0, {}))).toEqual({ possible: false, reason: 'the process runs as root' });
    expect(sandboxSupport(probe(1000, { '/proc/sys/user/max_user_namespaces': '0' })).possible).toBe(false);
    expect(sandboxSupport(probe(1000, { '/proc/sys/kernel/unprivileged_userns_clone': '0' })).possible).toBe(false);
    expect(sandboxSupport(probe(1000, { '/proc/sys/kernel/apparmor_restrict_unprivileged_userns': '1' })).possible).toBe(false);
    expect(
      sandboxSupport(probe(1000, { '/proc/sys/user/max_user_namespaces': '63000', '/proc/sys/kernel/unprivileged_userns_clone': '1' }))
        .possible,
    ).toBe(true);
  });
});
