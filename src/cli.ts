import 'reflect-metadata';
import { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AccountError } from './accounts/accounts.service';
import { UserError } from './accounts/users.service';
import { AppModule } from './app.module';
import { ApiKeyNotFoundError } from './auth/api-keys.service';
import { buildAdminProgram } from './cli/admin-commands';
import { NoSecretKeyError } from './sql/secret-reseal';
import { ConfigError, loadConfigFromProcessEnv } from './config/app-config';

/** `npm run cli -- <command> [--json]`: the admin CLI (CONTRACT.md, "Admin CLI"). Exit 1 on error. */
async function main(): Promise<void> {
  let context: INestApplicationContext | undefined;
  const app = async () => {
    context ??= await NestFactory.createApplicationContext(
      AppModule.register({ config: loadConfigFromProcessEnv(), runProcessors: false }),
      { logger: ['error'] },
    );
    return context;
  };
  const program = buildAdminProgram(app, (json) => (obj, text) => {
    process.stdout.write(`${json ? JSON.stringify(obj) : text}\n`);
  });
  try {
    await program.parseAsync(process.argv);
  } catch (err) {
    const expected =
      err instanceof AccountError ||
      err instanceof UserError ||
      err instanceof ApiKeyNotFoundError ||
      err instanceof ConfigError ||
      err instanceof NoSecretKeyError;
    const message = expected ? (err as Error).message : ((err as Error).stack ?? String(err));
    process.stderr.write(program.opts().json ? `${JSON.stringify({ error: message })}\n` : `error: ${message}\n`);
    process.exitCode = 1;
  } finally {
    await context?.close();
  }
}

void main();
