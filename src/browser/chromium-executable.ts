import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import { BrowserUnavailableError } from './browser-errors';

/**
 * Where the browser is looked for when `CHROMIUM_PATH` is unset, best first: Debian's
 * `chromium-headless-shell` (the default capture browser: about 2.5× the captures/s of the full
 * browser's new headless mode on the same machine), then full Chromium builds (docs/capture-engine.md,
 * "Which browser").
 */
export const CHROMIUM_CANDIDATES = [
  '/usr/bin/chromium-headless-shell',
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome-stable',
  '/usr/bin/google-chrome',
  '/snap/bin/chromium',
];

/**
 * The browser executable to launch: `configured` (`CHROMIUM_PATH`) when set, else the first
 * {@link CHROMIUM_CANDIDATES} entry that exists and is executable.
 * Throws {@link BrowserUnavailableError} when the configured file is missing or not executable, or
 * when no candidate exists.
 */
export function resolveChromiumExecutable(configured: string | null, candidates: readonly string[] = CHROMIUM_CANDIDATES): string {
  if (configured) {
    if (!isExecutable(configured))
      throw new BrowserUnavailableError(`CHROMIUM_PATH=${JSON.stringify(configured)}: no such executable file`);
    return unwrapLauncher(configured);
  }
  const found = candidates.find(isExecutable);
  if (!found) throw new BrowserUnavailableError(`CHROMIUM_PATH is unset and no browser was found at ${candidates.join(', ')}`);
  return unwrapLauncher(found);
}

/**
 * The binary behind a launcher script that only runs it with the same arguments, or `path` itself.
 * Debian's `/usr/bin/chromium-headless-shell` is such a script (`/usr/lib/chromium/chromium-headless-shell "$@"`,
 * without `exec`): launched through it, the browser runs as a grandchild behind a `sh` that Playwright
 * signals instead of the browser. Launching the binary directly saves that process and lets a crash
 * or a shutdown reach the browser itself.
 */
export function unwrapLauncher(path: string): string {
  try {
    if (statSync(path).size > 4096) return path;
    const text = readFileSync(path, 'utf8');
    if (!text.startsWith('#!')) return path;
    const commands = text
      .split('\n')
      .slice(1)
      .map((line) => line.trim())
      .filter((line) => line && !line.startsWith('#'));
    const target = commands.length === 1 ? /^(?:exec\s+)?(\/[^\s"']+)\s+"\$@"$/.exec(commands[0])?.[1] : undefined;
    return target && isExecutable(target) ? target : path;
  } catch {
    return path;
  }
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
