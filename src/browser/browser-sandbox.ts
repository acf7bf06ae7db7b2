import { readFileSync } from 'node:fs';

/**
 * Environment variables Chromium is launched with, and no others (docs/security.md, "The browser is
 * an attacker-controlled process"): what it needs to find its libraries, fonts, locale and a temporary
 * directory. The service's own environment (`DATABASE_URL`, `WEBHOOK_SECRET_KEY`, S3 credentials,
 * tokens) never reaches the browser's processes.
 */
export const BROWSER_ENVIRONMENT_NAMES = [
  'PATH',
  'HOME',
  'TMPDIR',
  'LANG',
  'LANGUAGE',
  'LC_ALL',
  'LC_CTYPE',
  'TZ',
  'FONTCONFIG_FILE',
  'FONTCONFIG_PATH',
  'XDG_CONFIG_HOME',
  'XDG_CACHE_HOME',
  'XDG_RUNTIME_DIR',
] as const;

/** The environment for Chromium: the {@link BROWSER_ENVIRONMENT_NAMES} present in `env`, nothing else. */
// eslint-disable-next-line no-restricted-properties -- filters the process's environment for a child; not configuration
export function browserEnvironment(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of BROWSER_ENVIRONMENT_NAMES) {
    const value = env[name];
    if (value !== undefined) out[name] = value;
  }
  return out;
}

/** What {@link sandboxSupport} reads: the process's uid and files under `/proc/sys`. */
export interface SandboxProbe {
  uid: number | null;
  read(path: string): string | null;
}

/** Injection token of the browser pool's {@link SandboxProbe}; this process's own when none is provided. */
export const SANDBOX_PROBE = Symbol('SANDBOX_PROBE');

/** This process's uid and its `/proc/sys` files. */
export const systemProbe: SandboxProbe = {
  uid: typeof process.getuid === 'function' ? process.getuid() : null,
  read(path) {
    try {
      return readFileSync(path, 'utf8').trim();
    } catch {
      return null;
    }
  },
};

/**
 * Whether Chromium's sandbox can work in this process, and why not: Chromium refuses it as root,
 * and its namespace sandbox needs unprivileged user namespaces (`user.max_user_namespaces` > 0,
 * Debian's `kernel.unprivileged_userns_clone` not 0, Ubuntu's AppArmor restriction off). In Docker
 * the default seccomp profile allows them for the image's `node` user on current kernels
 * (docs/security.md). Where this says no, the browser pool does not even try a sandboxed launch
 * (CHROMIUM_SANDBOX=on: the process takes no work; see `BrowserPool.admitsWork`).
 */
export function sandboxSupport(probe: SandboxProbe = systemProbe): { possible: boolean; reason: string } {
  if (probe.uid === 0) return { possible: false, reason: 'the process runs as root' };
  if (Number(probe.read('/proc/sys/user/max_user_namespaces') ?? '1') <= 0)
    return { possible: false, reason: 'user namespaces are disabled (user.max_user_namespaces = 0)' };
  if (probe.read('/proc/sys/kernel/unprivileged_userns_clone') === '0')
    return { possible: false, reason: 'kernel.unprivileged_userns_clone = 0' };
  if (probe.read('/proc/sys/kernel/apparmor_restrict_unprivileged_userns') === '1') {
    return { possible: false, reason: 'AppArmor restricts unprivileged user namespaces' };
  }
  return { possible: true, reason: 'user namespaces are available' };
}
