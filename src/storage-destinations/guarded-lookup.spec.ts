import type { LookupAddress } from 'node:dns';
import { SsrfGuard, TargetRefusedError } from '../egress/ssrf-guard';
import { DestinationRefusedError, guardedLookup } from './guarded-lookup';

/** A guard whose resolve-and-check answers from a table: an address, or a refusal. */
function guardOf(answers: Record<string, string | TargetRefusedError>): SsrfGuard {
  return {
    addressToConnect: async (host: string) => {
      const answer = answers[host];
      if (answer instanceof Error) throw answer;
      return answer;
    },
  } as unknown as SsrfGuard;
}

function lookup(guard: SsrfGuard, host: string, all: boolean): Promise<{ err: Error | null; result: unknown; family?: number }> {
  return new Promise((resolve) => {
    (guardedLookup(guard) as unknown as (h: string, o: { all: boolean }, cb: (...a: unknown[]) => void) => void)(
      host,
      { all },
      (err, result, family) => resolve({ err: err as Error | null, result, family: family as number | undefined }),
    );
  });
}

describe('guardedLookup (connections to checked addresses only, CONTRACT.md "SSRF guard")', () => {
  const guard = guardOf({
    'bucket.example.com': '203.0.113.9',
    'v6.example.com': '2001:db8::1',
    'internal.example.com': new TargetRefusedError('internal.example.com resolves to a blocked address (private)'),
  });

  it('answers the address the guard checked, in both callback forms', async () => {
    expect(await lookup(guard, 'bucket.example.com', false)).toEqual({ err: null, result: '203.0.113.9', family: 4 });
    const all = await lookup(guard, 'v6.example.com', true);
    expect(all.result as LookupAddress[]).toEqual([{ address: '2001:db8::1', family: 6 }]);
  });

  it('fails the connection with a customer-safe refusal when the guard refuses the host', async () => {
    const { err } = await lookup(guard, 'internal.example.com', false);
    expect(err).toBeInstanceOf(DestinationRefusedError);
    expect(err?.message).toBe('Target not allowed: internal.example.com resolves to a blocked address (private)');
  });
});
