// Keeps the SDK's version equal to `info.version` of openapi/openapi.json (the SDK follows the document).
// `node scripts/sdk-version.js` writes it into openapi/sdk-typescript/package.json (part of `npm run sdk`);
// with `--check` it writes nothing and exits 1 when they differ (part of `npm run openapi:check`).
const { readFileSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');
const root = join(__dirname, '..');
const documentVersion = JSON.parse(readFileSync(join(root, 'openapi', 'openapi.json'), 'utf8')).info.version;
const file = join(root, 'openapi', 'sdk-typescript', 'package.json');
const text = readFileSync(file, 'utf8');
const pkg = JSON.parse(text);
if (pkg.version === documentVersion) {
  process.stdout.write(`@glimpse/sdk ${pkg.version} follows info.version\n`);
} else if (process.argv.includes('--check')) {
  process.stderr.write(
    `@glimpse/sdk is ${pkg.version} but info.version of openapi/openapi.json is ${documentVersion}: run \`npm run sdk\` and commit.\n`,
  );
  process.exit(1);
} else {
  writeFileSync(file, text.replace(/("version":\s*)"[^"]*"/, `$1${JSON.stringify(documentVersion)}`));
  process.stdout.write(`@glimpse/sdk version set to ${documentVersion}\n`);
}
