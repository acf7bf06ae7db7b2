#!/usr/bin/env node
// Writes src/capture/device-descriptors.json: Playwright's device descriptors (`playwright.devices`),
// so that a process that only answers the API never loads Playwright (docs/performance.md, "Boot").
// Run it after upgrading Playwright: src/capture/devices.spec.ts fails while the copy differs from the
// installed Playwright's.
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');
const prettier = require('prettier');
const { devices } = require('playwright');

async function main() {
  const file = join(__dirname, '..', 'src', 'capture', 'device-descriptors.json');
  const options = await prettier.resolveConfig(file);
  writeFileSync(file, await prettier.format(JSON.stringify(devices), { ...options, filepath: file }));
}

main().catch((err) => {
  process.stderr.write(`${err.stack}\n`);
  process.exit(1);
});
