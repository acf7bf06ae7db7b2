import { INestApplicationContext } from '@nestjs/common';
import { Command, InvalidArgumentError } from 'commander';
import { AccountsService } from '../accounts/accounts.service';
import { isPlan, Plan, PLANS } from '../accounts/plan';
import { USER_ROLES, UserRole } from '../accounts/user.entity';
import { UsersService } from '../accounts/users.service';
import { ApiKeysService } from '../auth/api-keys.service';
import { sumResealReports } from '../sql/secret-reseal';
import { QuotaService } from '../quota/quota.service';
import { RenderKeysService } from '../render/render-keys.service';
import { ProfilesService } from '../profiles/profiles.service';
import { StorageDestinationsService } from '../storage-destinations/storage-destinations.service';
import { WebhooksService } from '../webhooks/webhooks.service';

/** Prints a command's result: the JSON object with `--json`, else readable lines. */
type Printer = (json: object, text: string) => void;

function parsePlan(value: string): Plan {
  if (!isPlan(value)) throw new InvalidArgumentError(`must be one of ${PLANS.join(', ')}`);
  return value;
}

function parseRole(value: string): UserRole {
  if (!(USER_ROLES as readonly string[]).includes(value)) throw new InvalidArgumentError(`must be one of ${USER_ROLES.join(', ')}`);
  return value as UserRole;
}

/**
 * The admin commands of CONTRACT.md, "Admin CLI": `account:create`, `account:plan`, `key:create`,
 * `key:revoke`, `key:list`, `webhook:reseal` (docs/webhooks.md#configuration: key rotation), and the dashboard's
 * `user:create` and `user:reset-password` (CONTRACT.md, "Dashboard"). `app` is resolved lazily so
 * `--help` needs no database.
 */
export function buildAdminProgram(app: () => Promise<INestApplicationContext>, print: (json: boolean) => Printer): Command {
  const program = new Command('glimpse').description('Glimpse admin CLI').option('--json', 'print one JSON object on stdout');
  const out = () => print(Boolean(program.opts().json));

  program
    .command('account:create')
    .description('create an account')
    .requiredOption('--email <email>', 'account email')
    .option('--plan <plan>', `one of ${PLANS.join(', ')}`, parsePlan, 'free' as Plan)
    .action(async (opts: { email: string; plan: Plan }) => {
      const account = await (await app()).get(AccountsService).create(opts.email, opts.plan);
      const json = { id: account.id, email: account.email, plan: account.plan };
      out()(json, `Created account ${account.id} (${account.email}, plan ${account.plan})`);
    });

  program
    .command('account:plan')
    .description("change an account's plan")
    .requiredOption('--account <idOrEmail>', 'account id or email')
    .requiredOption('--plan <plan>', `one of ${PLANS.join(', ')}`, parsePlan)
    .action(async (opts: { account: string; plan: Plan }) => {
      const account = await (await app()).get(AccountsService).changePlan(opts.account, opts.plan);
      out()({ id: account.id, email: account.email, plan: account.plan }, `Account ${account.id} is now on plan ${account.plan}`);
    });

  program
    .command('key:create')
    .description('create an API key (the secret is printed once)')
    .requiredOption('--account <idOrEmail>', 'account id or email')
    .option('--name <name>', 'label, e.g. the environment')
    .action(async (opts: { account: string; name?: string }) => {
      const key = await (await app()).get(ApiKeysService).create(opts.account, opts.name);
      out()(key, `Created API key ${key.id} for ${key.accountId}. Store it now; it is not shown again:\n${key.key}`);
    });

  program
    .command('key:revoke')
    .description('revoke an API key at once')
    .requiredOption('--key <keyId>', 'key record id (key_…)')
    .action(async (opts: { key: string }) => {
      const key = await (await app()).get(ApiKeysService).revoke(opts.key);
      const revokedAt = (key.revokedAt as Date).toISOString();
      out()({ id: key.id, revokedAt }, `Revoked ${key.id} at ${revokedAt}`);
    });

  program
    .command('key:list')
    .description("list an account's API keys with this month's usage")
    .requiredOption('--account <idOrEmail>', 'account id or email')
    .action(async (opts: { account: string }) => {
      const ctx = await app();
      const account = await ctx.get(AccountsService).get(opts.account);
      const keys = await ctx.get(ApiKeysService).list(account.id);
      const quota = ctx.get(QuotaService);
      const usage = await Promise.all(keys.map((k) => quota.status({ apiKeyId: k.id, plan: account.plan })));
      const data = keys.map((k, i) => ({
        id: k.id,
        prefix: k.prefix,
        name: k.name,
        createdAt: k.createdAt.toISOString(),
        revokedAt: k.revokedAt?.toISOString() ?? null,
        usedThisMonth: usage[i].used,
      }));
      const text = data.length
        ? data
            .map(
              (k) =>
                `${k.id}  ${k.prefix}…  ${k.name ?? '-'}  used ${k.usedThisMonth}  ${k.revokedAt ? `revoked ${k.revokedAt}` : 'active'}`,
            )
            .join('\n')
        : 'No keys';
      out()({ data }, text);
    });

  program
    .command('webhook:reseal')
    .description(
      'after adding a new first key to WEBHOOK_SECRET_KEYS: re-seal every stored secret (webhook signing secrets, render-key secrets, storage-destination credentials, browser profile states) with it',
    )
    .action(async () => {
      const context = await app();
      // Each table in turn; a missing key fails on the first, before anything is written.
      const report = sumResealReports([
        await context.get(WebhooksService).resealSecrets(),
        await context.get(RenderKeysService).resealSecrets(),
        await context.get(StorageDestinationsService).resealCredentials(),
        await context.get(ProfilesService).resealStates(),
      ]);
      const text =
        `Re-sealed ${report.resealed} record(s) holding secrets; ${report.alreadyCurrent} already current.` +
        (report.unreadable.length
          ? `\nNo configured key opens the secrets of: ${report.unreadable.join(', ')} (rotate or re-create them).`
          : '');
      out()(report, text);
    });

  program
    .command('user:create')
    .description('create a dashboard user and print a one-time set-password link (valid 24 h)')
    .requiredOption('--account <idOrEmail>', 'account id or email')
    .requiredOption('--email <email>', "the user's email (sign-in name)")
    .option('--role <role>', `one of ${USER_ROLES.join(', ')}`, parseRole, 'owner' as UserRole)
    .action(async (opts: { account: string; email: string; role: UserRole }) => {
      const user = await (await app()).get(UsersService).create(opts.account, opts.email, opts.role);
      const json = { id: user.id, email: user.email, accountId: user.accountId, role: user.role, setPasswordUrl: user.setPasswordUrl };
      out()(
        json,
        `Created ${user.role} ${user.email} (${user.id}) in ${user.accountId}. Set a password within 24 h at:\n${user.setPasswordUrl}`,
      );
    });

  program
    .command('user:reset-password')
    .description('print a one-time set-password link for a dashboard user (valid 24 h)')
    .requiredOption('--email <email>', "the user's email")
    .action(async (opts: { email: string }) => {
      const link = await (await app()).get(UsersService).resetPasswordLink(opts.email);
      out()(link, `Set a new password within 24 h at:\n${link.setPasswordUrl}`);
    });

  return program;
}
