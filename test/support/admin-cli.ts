import { buildAdminProgram } from '../../src/cli/admin-commands';
import type { TestApp } from './test-app';

/**
 * Runs one admin CLI command (docs/admin-cli.md) in process against the test app, with `--json`, and
 * returns its JSON answer. Throws commander's error for a usage error.
 */
export async function adminCliJson(t: TestApp, ...args: string[]): Promise<any> {
  const printed: string[] = [];
  const program = buildAdminProgram(
    async () => t.app,
    (json) => (obj, text) => printed.push(json ? JSON.stringify(obj) : text),
  );
  for (const command of [program, ...program.commands]) command.exitOverride().configureOutput({ writeErr: () => undefined });
  await program.parseAsync(['node', 'glimpse', ...args, '--json']);
  return JSON.parse(printed[0]);
}
