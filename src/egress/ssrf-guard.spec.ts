import { AppConfig } from '../config/app-config';
import { AddressPolicy } from './address-policy';
import { SsrfGuard, TargetRefusedError, TargetUnresolvedError } from './ssrf-guard';

describe('SsrfGuard', () => {
  const config = (allowPrivate: boolean) => ({ ssrfAllowPrivate: allowPrivate }) as AppConfig;
  /** A guard whose resolver is `resolve` (by default one that must not be called). */
  const guard = (allowPrivate = false, resolve: (host: string) => Promise<string[]> = async () => ['93.184.215.14']) =>
    new SsrfGuard(config(allowPrivate), new AddressPolicy(config(allowPrivate)), { resolve });

  describe('assertAllowed (at submission)', () => {
    it.each([
      'http://127.0.0.1/',
      'http://[::ffff:127.0.0.1]/',
      'http://2130706433/',
      'http://0x7f.1/',
      'http://127.1/',
      'http://[::1]:8080/',
      'http://169.254.169.254/latest/meta-data/',
      'http://[fd00::1]/',
      'http://10.0.0.1/',
    ])('refuses %s with 400 TARGET_NOT_ALLOWED', async (url) => {
      await expect(guard().assertAllowed(url)).rejects.toMatchObject({ code: 'TARGET_NOT_ALLOWED', status: 400 });
    });

    it.each(['file:///etc/passwd', 'ftp://example.com/', 'chrome://version', 'view-source:http://example.com/'])(
      'refuses the scheme of %s',
      async (url) => {
        await expect(guard(true).assertAllowed(url)).rejects.toMatchObject({ code: 'TARGET_NOT_ALLOWED' });
      },
    );

    it('refuses a name when any of its addresses is blocked', async () => {
      const g = guard(false, async () => ['93.184.215.14', '10.0.0.1']);
      await expect(g.assertAllowed('http://mixed.example/')).rejects.toMatchObject({ code: 'TARGET_NOT_ALLOWED' });
    });

    it('lets private addresses through with SSRF_ALLOW_PRIVATE', async () => {
      await expect(guard(true).assertAllowed('http://127.0.0.1:3000/')).resolves.toBeUndefined();
    });
  });

  describe('addressToConnect (the egress proxy, per connection)', () => {
    it('returns the checked address to dial, resolving once per connection', async () => {
      const lookups: string[] = [];
      const g = guard(false, async (host) => {
        lookups.push(host);
        return ['93.184.215.14'];
      });
      await expect(g.addressToConnect('example.com')).resolves.toBe('93.184.215.14');
      expect(lookups).toEqual(['example.com']);
    });

    it('refuses the second answer of a resolver that rebinds to a private address', async () => {
      let calls = 0;
      const g = guard(false, async () => (++calls === 1 ? ['93.184.215.14'] : ['127.0.0.1']));
      await expect(g.assertAllowed('http://rebind.example/')).resolves.toBeUndefined();
      await expect(g.addressToConnect('rebind.example')).rejects.toBeInstanceOf(TargetRefusedError);
    });

    it('checks IP literals without resolving, brackets or not', async () => {
      const g = guard(false, async () => {
        throw new Error('must not resolve');
      });
      await expect(g.addressToConnect('[::ffff:7f00:1]')).rejects.toThrow(/loopback/);
      await expect(g.addressToConnect('8.8.8.8')).resolves.toBe('8.8.8.8');
    });

    it('reports a name that does not resolve as unresolved, not refused', async () => {
      const g = guard(false, async () => {
        throw Object.assign(new Error('nope'), { code: 'ENOTFOUND' });
      });
      await expect(g.addressToConnect('nowhere.example')).rejects.toBeInstanceOf(TargetUnresolvedError);
    });
  });
});
