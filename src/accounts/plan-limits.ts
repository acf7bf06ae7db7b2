import { EntityManager } from 'typeorm';
import { documentErrorDetails } from '../common/api-error-responses.decorator';
import { ApiError, ErrorCode } from '../common/api-error';
import { LIMITED_RESOURCES, LimitedResource, Plan, PLANS, planLimit } from './plan';

/** 403 `PLAN_LIMIT_REACHED`: what the plan limits, how many it allows, and the plan (CONTRACT.md, "Organizations and plan limits"). */
documentErrorDetails(
  'PLAN_LIMIT_REACHED',
  {
    resource: { type: 'string', enum: [...LIMITED_RESOURCES], description: 'What the plan limits the number of' },
    limit: { type: 'integer', description: 'How many of it the plan allows' },
    plan: { type: 'string', enum: [...PLANS] },
  },
  { resource: 'webhook_endpoints', limit: 2, plan: 'free' },
);

/**
 * Inside the caller's transaction, before it inserts one more `resource` for `accountId`: locks the
 * account row (so concurrent creations of the same account queue up and the limit holds under any
 * concurrency), counts what the account has with `countSql` (one parameter, `$1` = the account id,
 * returning one row `{ n }`), and throws 403 `PLAN_LIMIT_REACHED` with `details: { resource, limit,
 * plan }` when the plan's limit is reached (CONTRACT.md, "Organizations and plan limits"). Also
 * throws 404 `NOT_FOUND` for an account that does not exist. Operators' CLI commands do not call it.
 */
export async function assertBelowPlanLimit(
  manager: EntityManager,
  accountId: string,
  resource: LimitedResource,
  countSql: string,
): Promise<void> {
  const [account]: { plan: Plan }[] = await manager.query(`SELECT plan FROM accounts WHERE id = $1 FOR UPDATE`, [accountId]);
  if (!account) throw ApiError.notFound('Account');
  const [{ n }]: { n: number }[] = await manager.query(countSql, [accountId]);
  const limit = planLimit(account.plan, resource);
  if (n >= limit) throw planLimitReached(resource, limit, account.plan);
}

/** 403 `PLAN_LIMIT_REACHED` (CONTRACT.md, "Error codes beyond the spec's table"). */
export function planLimitReached(resource: LimitedResource, limit: number, plan: Plan): ApiError {
  const what = resource.replace(/_/g, ' ').replace(/s$/, '');
  return new ApiError(
    ErrorCode.PLAN_LIMIT_REACHED,
    403,
    `The ${plan} plan allows ${limit} ${resource.replace(/_/g, ' ')}; delete one or change plan to add another ${what}`,
    {
      resource,
      limit,
      plan,
    },
  );
}
