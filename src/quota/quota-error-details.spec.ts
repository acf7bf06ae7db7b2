import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { PLANS } from '../accounts/plan';
import { errorResponseOptions } from '../common/api-error-responses.decorator';
import './quota-error-details';

const detailsOf = (options: ReturnType<typeof errorResponseOptions>) =>
  ((options.schema.allOf[1] as SchemaObject).properties as Record<string, SchemaObject>).details;

describe('quota error details', () => {
  it('documents PLAN_QUOTA_EXCEEDED details with every plan (spec section 7.2)', () => {
    const options = errorResponseOptions({ status: 429, codes: ['PLAN_QUOTA_EXCEEDED'] });
    const details = detailsOf(options);
    expect(details.required).toEqual(['scope', 'used', 'limit', 'plan', 'resetAt']);
    expect((details.properties!.plan as SchemaObject).enum).toEqual([...PLANS]);
    expect((details.properties!.scope as SchemaObject).enum).toEqual(['key', 'account']);
    expect(options.example).toMatchObject({ code: 'PLAN_QUOTA_EXCEEDED', details: { plan: 'free' } });
  });

  it('merges PLAN_QUOTA_EXCEEDED and RATE_LIMITED details into one object requiring the fields both share', () => {
    const details = detailsOf(errorResponseOptions({ status: 429, codes: ['PLAN_QUOTA_EXCEEDED', 'RATE_LIMITED'] }));
    expect(details.required).toEqual(['limit']);
    expect(Object.keys(details.properties!).sort()).toEqual(['limit', 'plan', 'resetAt', 'scope', 'used', 'windowSeconds']);
    expect((details.properties!.limit as SchemaObject).description).toMatch(/^PLAN_QUOTA_EXCEEDED: .*; RATE_LIMITED: /);
  });
});
