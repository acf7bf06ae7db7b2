import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { Account } from '../../src/accounts/account.entity';
import { ApiKey } from '../../src/auth/api-key.entity';
import { newId } from '../../src/common/ids';

/** Inserts a `free` account (email `<id>@example.test`) created at `now` straight into a service test's database; returns its id. */
export async function insertAccount(db: DataSource, now: Date): Promise<string> {
  const accountId = newId('account');
  await db.getRepository(Account).insert({ id: accountId, email: `${accountId}@example.test`, plan: 'free', createdAt: now });
  return accountId;
}

/** Inserts an API key of `accountId` created at `now` (a random secret hash: no request can use it); returns its id. */
export async function insertApiKey(db: DataSource, accountId: string, now: Date): Promise<string> {
  const apiKeyId = newId('apiKey');
  await db.getRepository(ApiKey).insert({
    id: apiKeyId,
    accountId,
    name: null,
    prefix: 'gl_test',
    secretHash: randomBytes(32).toString('hex'),
    createdAt: now,
  });
  return apiKeyId;
}
