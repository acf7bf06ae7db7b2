import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { build, type Plugin } from 'esbuild';
import { pngSize } from '../support/images';
import { PageServer, startPageServer } from '../support/page-server';
import { startTestApp, TestApp } from '../support/test-app';

/*
 * The SDK as a developer gets it: `npm pack` of openapi/sdk-typescript (its prepack builds dist/ with
 * tsup), installed from the tarball into a fresh project under the OS temp directory, then imported as
 * ESM and as CommonJS, its CLI run, its root entry bundled for browsers, and its README's examples compiled.
 */

const run = promisify(execFile);
const ROOT = resolve(__dirname, '../..');
const SDK_DIR = join(ROOT, 'openapi', 'sdk-typescript');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

interface PackedFile {
  path: string;
  size: number;
}

describe('@glimpse/sdk package (npm pack → install → use)', () => {
  let project: string;
  let packed: { filename: string; version: string; size: number; unpackedSize: number; files: PackedFile[] };
  let t: TestApp;
  let pages: PageServer;
  let key: string;

  beforeAll(async () => {
    project = mkdtempSync(join(tmpdir(), 'glimpse-sdk-consumer-'));
    // Build first (what `prepack` runs), then pack without scripts: the build's own output (coloured
    // on some terminals) never mixes with npm's JSON.
    await run(npm, ['run', 'build'], { cwd: SDK_DIR, maxBuffer: 16 << 20 });
    const { stdout } = await run(npm, ['pack', '--json', '--ignore-scripts', '--pack-destination', project], {
      cwd: SDK_DIR,
      maxBuffer: 16 << 20,
    });
    packed = JSON.parse(stdout)[0];
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'sdk-consumer', private: true }));
    await run(npm, ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', join(project, packed.filename)], {
      cwd: project,
      maxBuffer: 16 << 20,
    });
    pages = await startPageServer({ '/hello': '<html><body style="background:#fff"><h1>Hello package</h1></body></html>' });
    t = await startTestApp();
    key = (await t.createKey('pro')).key;
  }, 240_000);

  afterAll(async () => {
    await t?.close();
    await pages?.close();
    if (project) rmSync(project, { recursive: true, force: true });
  });

  it('packs only dist, README.md, CHANGELOG.md and package.json, at the version of the OpenAPI document', () => {
    const document = JSON.parse(readFileSync(join(ROOT, 'openapi', 'openapi.json'), 'utf8'));
    expect(packed.version).toBe(document.info.version);
    const paths = packed.files.map((f) => f.path).sort();
    expect(paths.filter((p) => !p.startsWith('dist/'))).toEqual(['CHANGELOG.md', 'README.md', 'package.json']);
    expect(paths).toEqual(
      expect.arrayContaining([
        'dist/index.js',
        'dist/index.mjs',
        'dist/index.d.ts',
        'dist/index.d.mts',
        'dist/webhooks.js',
        'dist/webhooks.mjs',
        'dist/cli.js',
      ]),
    );
    console.log(
      `packed ${packed.filename}: ${packed.size} B (unpacked ${packed.unpackedSize} B)\n${packed.files.map((f) => `  ${String(f.size).padStart(8)} ${f.path}`).join('\n')}`,
    );
  });

  it('imports as ESM and as CommonJS, and one call of each reaches the running app', async () => {
    const call = `
      const glimpse = new Glimpse({ apiKey: process.env.KEY, baseUrl: process.env.BASE });
      const job = await glimpse.screenshots.create({ url: process.env.PAGE, width: 200, height: 100 });
      const missing = await glimpse.runs.get('run_000000000000000000000000').catch((e) => e);
      const event = await verifyWebhook('{}', {}, 'whsec_x').catch((e) => e);
      console.log(JSON.stringify({ status: job.status, notFound: missing instanceof GlimpseError && missing.code, verifier: event.code }));`;
    writeFileSync(
      join(project, 'esm.mjs'),
      `import { Glimpse, GlimpseError } from '@glimpse/sdk';\nimport { verifyWebhook } from '@glimpse/sdk/webhooks';\n${call}\n`,
    );
    writeFileSync(
      join(project, 'cjs.cjs'),
      `const { Glimpse, GlimpseError } = require('@glimpse/sdk');\nconst { verifyWebhook } = require('@glimpse/sdk/webhooks');\n(async () => {${call}\n})();\n`,
    );
    const env = { ...process.env, KEY: key, BASE: t.baseUrl, PAGE: `${pages.url}/hello` };
    for (const file of ['esm.mjs', 'cjs.cjs']) {
      const { stdout } = await run(process.execPath, [file], { cwd: project, env });
      expect(JSON.parse(stdout)).toEqual({ status: 'pending', notFound: 'NOT_FOUND', verifier: 'MISSING_SIGNATURE' });
    }
  });

  it('its CLI captures a loopback page to a PNG, and explains a usage error with exit code 2', async () => {
    const bin = join(project, 'node_modules', '.bin', 'glimpse');
    const env = { ...process.env, GLIMPSE_API_KEY: key, GLIMPSE_BASE_URL: t.baseUrl };
    const out = join(project, 'shot.png');
    const { stdout, stderr } = await run(
      bin,
      ['capture', `${pages.url}/hello`, '--width', '320', '--height', '240', '--block-ads', '-o', out],
      { cwd: project, env },
    );
    expect(JSON.parse(stdout)).toMatchObject({ status: 'done', width: 320, height: 240 });
    expect(stderr).toMatch(/done/);
    expect(pngSize(readFileSync(out))).toEqual({ width: 320, height: 240 });
    expect((await run(bin, ['--version'])).stdout.trim()).toBe(packed.version);

    const failed = await run(bin, ['capture', `${pages.url}/hello`, '-o', out, '--width', 'wide'], { cwd: project, env }).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect(failed).toMatchObject({ code: 2, stderr: expect.stringContaining('--width must be an integer') });
    const rejected = await run(bin, ['capture', 'ftp://example.com', '-o', out], { cwd: project, env }).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect(rejected).toMatchObject({ code: 1, stderr: expect.stringMatching(/VALIDATION_FAILED \(HTTP 400\).*\(request \S+\)/) });
  });

  it('its CLI crawls a loopback site with a progress bar and saves the bundle', async () => {
    const bin = join(project, 'node_modules', '.bin', 'glimpse');
    const env = { ...process.env, GLIMPSE_API_KEY: key, GLIMPSE_BASE_URL: t.baseUrl };
    const out = join(project, 'site.zip');
    const { stdout, stderr } = await run(
      bin,
      [
        'crawl',
        `${pages.url}/hello`,
        '--max-pages',
        '5',
        '--max-depth',
        '0',
        '--discover',
        'links',
        '--capture',
        '{"width":320,"height":240}',
        '--out',
        out,
      ],
      { cwd: project, env },
    );
    expect(JSON.parse(stdout)).toMatchObject({ status: 'completed', pagesDone: 1, stoppedReason: 'exhausted' });
    expect(stderr).toMatch(/\[#{30}\] 1\/1 pages \(0 failed, 1 found\)/);
    expect(stderr).toMatch(/saved .*site\.zip \(application\/zip/);
    expect(readFileSync(out).subarray(0, 2).toString()).toBe('PK');
  });

  it('bundles the root entry and /webhooks for browsers without any node: module', async () => {
    const nodeImports: string[] = [];
    const noNodeModules: Plugin = {
      name: 'no-node-modules',
      setup(b) {
        b.onResolve({ filter: /^node:/ }, (args) => {
          nodeImports.push(`${args.path} (from ${args.importer})`);
          return { path: args.path, external: true };
        });
      },
    };
    writeFileSync(
      join(project, 'browser.mjs'),
      `export { Glimpse } from '@glimpse/sdk';\nexport { verifyWebhook } from '@glimpse/sdk/webhooks';\n`,
    );
    const result = await build({
      entryPoints: [join(project, 'browser.mjs')],
      absWorkingDir: project,
      bundle: true,
      platform: 'browser',
      format: 'esm',
      minify: true,
      outfile: join(project, 'out', 'browser.js'),
      plugins: [noNodeModules],
      logLevel: 'silent',
    });
    expect(result.errors).toEqual([]);
    expect(nodeImports).toEqual([]);
    const size = statSync(join(project, 'out', 'browser.js')).size;
    console.log(`browser bundle (Glimpse + verifyWebhook, minified ESM): ${size} B`);
    expect(size).toBeLessThan(64 * 1024);
  });

  it("compiles the SDK README's TypeScript examples against the installed package's types (ESM and CommonJS declarations)", async () => {
    const readme = readFileSync(join(SDK_DIR, 'README.md'), 'utf8');
    const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]);
    expect(blocks.length).toBeGreaterThanOrEqual(8);
    const dir = join(project, 'examples');
    mkdirSync(dir);
    blocks.forEach((code, i) => writeFileSync(join(dir, `example-${i + 1}.ts`), code));
    const types = join(ROOT, 'node_modules', '@types');
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    for (const moduleResolution of ['Bundler', 'Node10']) {
      writeFileSync(
        join(project, `tsconfig.${moduleResolution}.json`),
        JSON.stringify({
          compilerOptions: {
            module: 'ES2022',
            moduleResolution,
            target: 'ES2022',
            lib: ['ES2022', 'DOM'],
            strict: true,
            noEmit: true,
            // The examples are checked against the declarations; the declarations themselves were
            // checked when tsup built them, and @types/node and the DOM lib are not ours to check.
            skipLibCheck: true,
            esModuleInterop: true,
            typeRoots: [types],
            types: ['node'],
            // express's types come from the repository's devDependencies.
            paths: { express: [join(types, 'express')] },
          },
          include: ['examples/*.ts'],
        }),
      );
      const result = await run(process.execPath, [tsc, '-p', `tsconfig.${moduleResolution}.json`], { cwd: project }).catch(
        (e: { stdout: string }) => e,
      );
      expect({ moduleResolution, errors: 'stdout' in result ? result.stdout : '' }).toEqual({ moduleResolution, errors: '' });
    }
  });
});
