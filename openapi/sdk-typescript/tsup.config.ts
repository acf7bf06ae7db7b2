import { readFileSync } from 'node:fs';
import { defineConfig } from 'tsup';

const { version } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as { version: string };

/**
 * The published build: the root entry and `/webhooks` as ESM (`.mjs`) and CommonJS (`.js`) with types
 * for both (`.d.mts`, `.d.ts`), bundled for any platform (they use only web APIs); the CLI as one
 * CommonJS file for Node. Dependencies (openapi-fetch, commander) stay external.
 */
export default defineConfig([
  {
    entry: { index: 'src/index.ts', webhooks: 'src/webhook-verifier.ts' },
    format: ['esm', 'cjs'],
    platform: 'neutral',
    target: 'es2022',
    // Declarations without Node's types: these entries use only web APIs (the same files as with
    // them, for 2 s less CPU per build: the SDK package test builds it).
    dts: { compilerOptions: { types: [] } },
    treeshake: true,
  },
  {
    entry: { cli: 'src/cli.ts' },
    format: ['cjs'],
    platform: 'node',
    target: 'node20',
    define: { __SDK_VERSION__: JSON.stringify(version) },
    banner: { js: '#!/usr/bin/env node' },
  },
]);
