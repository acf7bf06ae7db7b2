import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { AppModule } from '../app.module';
import { loadConfig } from '../config/app-config';
import { serializeDocument } from './canonical-document';
import { buildOpenApiDocument } from './openapi-document';

/** Where the committed document lives, relative to the repository root. */
export const OPENAPI_FILE = 'openapi/openapi.json';

/**
 * The document of the module graph, built without PostgreSQL, Redis or a listening socket: the app is
 * created in Nest's `preview` mode, which registers modules and controllers but instantiates no provider
 * (so no connection is opened). The configuration is the defaults; nothing in the document depends on it.
 */
export async function generateOpenApiJson(): Promise<string> {
  const config = loadConfig({});
  const app = await NestFactory.create(AppModule.register({ config, runProcessors: false }), {
    preview: true,
    logger: false,
    bodyParser: false,
  });
  try {
    return serializeDocument(buildOpenApiDocument(app));
  } finally {
    await app.close();
  }
}

/**
 * `node dist/openapi/write-openapi.js [--check] [--out FILE]`: writes the document to `openapi/openapi.json`
 * (or FILE); with `--check`, writes nothing and exits 1 when the committed file differs from the code.
 */
async function main(argv: string[]): Promise<number> {
  const outIndex = argv.indexOf('--out');
  const file = resolve(outIndex >= 0 ? argv[outIndex + 1] : OPENAPI_FILE);
  const json = await generateOpenApiJson();
  if (argv.includes('--check')) {
    const committed = existsSync(file) ? readFileSync(file, 'utf8') : '';
    if (committed === json) {
      process.stdout.write(`${OPENAPI_FILE} is up to date\n`);
      return 0;
    }
    process.stderr.write(
      `${OPENAPI_FILE} is stale: the code's document differs. Run \`npm run sdk\` (document and SDK types) and commit both.\n`,
    );
    return 1;
  }
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, json);
  process.stdout.write(`wrote ${file}\n`);
  return 0;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err) => {
      process.stderr.write(`${(err as Error).stack ?? err}\n`);
      process.exit(1);
    },
  );
}
