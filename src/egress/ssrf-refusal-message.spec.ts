import { AppConfig } from '../config/app-config';
import { AddressPolicy } from './address-policy';
import { SsrfGuard } from './ssrf-guard';

/** CONTRACT.md, "SSRF guard": a refusal names the host and the kind of address, never the address it resolved to. */
describe('SSRF refusal messages', () => {
  const config = { ssrfAllowPrivate: false } as AppConfig;
  const guard = (addresses: string[]) => new SsrfGuard(config, new AddressPolicy(config), { resolve: async () => addresses });

  it.each([
    ['http://postgres:5432/', ['172.18.0.5'], 'postgres', 'private'],
    ['http://metadata.internal/latest', ['169.254.169.254'], 'metadata.internal', 'linkLocal'],
    ['http://redis/', ['93.184.215.14', '10.1.2.3'], 'redis', 'private'],
    ['http://v6.internal/', ['fd12:3456::7'], 'v6.internal', 'uniqueLocal'],
  ])('%s: names the host and the kind, not the address', async (url, addresses, host, kind) => {
    const refusal = await guard(addresses)
      .assertAllowed(url)
      .then(
        () => null,
        (err: Error & { details?: unknown }) => err,
      );
    expect(refusal).toMatchObject({ code: 'TARGET_NOT_ALLOWED', status: 400 });
    expect(refusal!.message).toBe(`Target not allowed: ${host} resolves to a blocked address (${kind})`);
    for (const address of addresses) {
      expect(refusal!.message).not.toContain(address);
      expect(JSON.stringify(refusal!.details)).not.toContain(address);
    }
  });

  it('an IP literal is named as the host it is', async () => {
    await expect(guard([]).assertAllowed('http://10.0.0.1/')).rejects.toThrow(
      'Target not allowed: 10.0.0.1 is a blocked address (private)',
    );
  });

  it('the egress proxy’s per-connection check says the same', async () => {
    await expect(guard(['10.9.8.7']).addressToConnect('internal.example')).rejects.toThrow(
      'internal.example resolves to a blocked address (private)',
    );
    await expect(guard(['10.9.8.7']).addressToConnect('internal.example')).rejects.not.toThrow('10.9.8.7');
  });
});
