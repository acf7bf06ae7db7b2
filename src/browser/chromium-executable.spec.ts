import { BrowserUnavailableError } from './browser-errors';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveChromiumExecutable, unwrapLauncher } from './chromium-executable';

describe('resolveChromiumExecutable', () => {
  it('uses CHROMIUM_PATH when it is an executable file', () => {
    expect(resolveChromiumExecutable(process.execPath)).toBe(process.execPath);
  });

  it('refuses a CHROMIUM_PATH that does not exist', () => {
    expect(() => resolveChromiumExecutable('/nowhere/chromium')).toThrow(BrowserUnavailableError);
    expect(() => resolveChromiumExecutable('/nowhere/chromium')).toThrow(/CHROMIUM_PATH="\/nowhere\/chromium": no such executable file/);
  });

  it('takes the first candidate that exists, in order of preference', () => {
    expect(resolveChromiumExecutable(null, ['/nowhere/chromium-headless-shell', process.execPath])).toBe(process.execPath);
  });

  it('says where it looked when no candidate exists', () => {
    expect(() => resolveChromiumExecutable(null, ['/nowhere/a', '/nowhere/b'])).toThrow(
      /no browser was found at \/nowhere\/a, \/nowhere\/b/,
    );
  });

  it("launches the binary behind a launcher script that only passes its arguments on (Debian's headless shell)", () => {
    const dir = mkdtempSync(join(tmpdir(), 'glimpse-launcher-'));
    try {
      const launcher = join(dir, 'chromium-headless-shell');
      writeFileSync(launcher, `#!/bin/sh -e\n${process.execPath} "$@"\n`);
      chmodSync(launcher, 0o755);
      expect(resolveChromiumExecutable(launcher)).toBe(process.execPath);
      const busy = join(dir, 'busy');
      writeFileSync(busy, `#!/bin/sh\nexport FOO=1\n${process.execPath} --flag "$@"\n`);
      chmodSync(busy, 0o755);
      expect(unwrapLauncher(busy)).toBe(busy);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
