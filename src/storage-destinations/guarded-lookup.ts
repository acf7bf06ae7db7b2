import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import { SsrfGuard, TargetRefusedError, TargetUnresolvedError } from '../egress/ssrf-guard';

/** The error a connection fails with when the SSRF guard refuses its host; `message` is customer-safe. */
export class DestinationRefusedError extends Error {
  readonly code = 'GLIMPSE_TARGET_REFUSED';
}

/**
 * A `lookup` for `net`/`tls.connect` (Node's agents, undici's `connect.lookup`) that resolves each
 * host name once through the egress {@link SsrfGuard}, which checks every address (`SSRF_ALLOW_PRIVATE`
 * lifts the check as for captures), and answers only the checked address: the connection goes to the
 * address that was checked, whatever the name resolves to a moment later (DNS rebinding cannot redirect
 * it), while the name stays the TLS SNI name and the `Host` header (CONTRACT.md, "SSRF guard").
 * A refused host fails the connection with {@link DestinationRefusedError}.
 */
export function guardedLookup(guard: SsrfGuard): LookupFunction {
  return ((hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    guard.addressToConnect(hostname).then(
      (address) => {
        const family = isIP(address);
        if (options?.all) callback(null, [{ address, family }]);
        else callback(null, address, family);
      },
      (err: unknown) => {
        if (err instanceof TargetRefusedError) callback(new DestinationRefusedError(`Target not allowed: ${err.message}`));
        else if (err instanceof TargetUnresolvedError) callback(Object.assign(new Error(err.message), { code: 'ENOTFOUND' }));
        else callback(err);
      },
    );
  }) as LookupFunction;
}
