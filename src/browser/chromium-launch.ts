import type { Browser, LaunchOptions } from 'playwright';
import { browserEnvironment } from './browser-sandbox';

/**
 * Flags for a headless Chromium on a server (the sandbox is `LaunchRequest.sandbox`): no GPU, none of the
 * background traffic (updates, sync, QUIC) a capture service must not make, and no WebRTC UDP
 * outside the proxy (it would bypass the SSRF guard).
 */
export const CHROMIUM_ARGS = [
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-extensions',
  '--mute-audio',
  '--hide-scrollbars',
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
  '--webrtc-ip-handling-policy=disable_non_proxied_udp',
];

/** What a browser launch needs from the pool. */
export interface LaunchRequest {
  /** The Chromium binary (`CHROMIUM_PATH` or the first candidate found; src/browser/chromium-executable.ts). */
  executablePath: string;
  /** The egress proxy every request goes through, `host:port`. */
  proxyServer: string;
  /**
   * Chromium's sandbox on, or off (`--no-sandbox`): `CHROMIUM_SANDBOX` (on by default). A launch with
   * it on that fails is never retried without it (CONTRACT.md "Tenancy: fair share and isolation").
   */
  sandbox: boolean;
}

/** Launches one browser for the pool; rejects when it cannot be started. */
export type BrowserLauncher = (request: LaunchRequest) => Promise<Browser>;

/** Injection token of the pool's {@link BrowserLauncher}; {@link launchChromium} when none is provided. */
export const BROWSER_LAUNCHER = Symbol('BROWSER_LAUNCHER');

/**
 * The launch options of every capture browser, in one place (ARCHITECTURE.md, "Real parts": Chromium):
 * headless, {@link CHROMIUM_ARGS}, every request, loopback included, through the egress proxy, the
 * sandbox as requested, and an environment of its own ({@link browserEnvironment}: none of the
 * service's credentials reach a process that runs pages of anyone's choosing; docs/security.md).
 */
export function chromiumLaunchOptions(request: LaunchRequest): LaunchOptions {
  return {
    executablePath: request.executablePath,
    headless: true,
    args: CHROMIUM_ARGS,
    chromiumSandbox: request.sandbox,
    env: browserEnvironment(),
    // Playwright's proxy option (it adds `--proxy-bypass-list=<-loopback>`, so loopback goes through
    // the proxy too) rather than a bare `--proxy-server` flag: requests Playwright makes for the
    // page (`route.fetch`, used by the `headers` option) then take the same proxy.
    proxy: { server: `http://${request.proxyServer}` },
  };
}

/** The real launcher: Playwright starts the system Chromium with {@link chromiumLaunchOptions}. */
export const launchChromium: BrowserLauncher = async (request) => {
  // Loaded at the first launch, not at boot: a process that never captures never loads Playwright
  // (docs/performance.md, "Boot").
  const { chromium } = await import('playwright');
  return chromium.launch(chromiumLaunchOptions(request));
};
