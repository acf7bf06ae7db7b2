import { lookup } from 'node:dns/promises';

/**
 * Resolves a host name to all of its addresses (IPv4 and IPv6 literals). An injection token like the
 * {@link Clock}: tests replace it (`overrideProvider(HostResolver)`) with a stub that answers without
 * any network, for example differently on each lookup to simulate DNS rebinding.
 */
export abstract class HostResolver {
  /** Every address of `host`. Rejects when the name does not resolve (the error's `code`, e.g. `ENOTFOUND`). */
  abstract resolve(host: string): Promise<string[]>;
}

/** The system resolver (`getaddrinfo`, as the browser uses), every address family. */
export class SystemHostResolver extends HostResolver {
  async resolve(host: string): Promise<string[]> {
    return (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
  }
}
