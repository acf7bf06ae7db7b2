import { DashboardSessionsService } from './dashboard-sessions.service';
import { DashboardViews } from './dashboard-views';

describe('dashboard templates', () => {
  const views = new DashboardViews();
  const signedIn = { user: { id: 'usr_1', email: 'a@example.com', role: 'owner' }, sessionId: 'ses_1', csrfToken: 'tok"en' };

  it('escape what customers typed (key names, URLs) and put the CSRF token in every form', () => {
    const html = views.render('keys', {
      signedIn,
      csrfToken: signedIn.csrfToken,
      active: 'keys',
      title: 'API keys',
      created: null,
      error: null,
      revoked: null,
      keys: [
        { id: 'key_1', name: '<script>alert(1)</script>', prefix: 'sk_live_AbCd', createdAt: new Date(), lastUsedAt: null, revokedAt: null, used: 0, limit: 100, remaining: 100 },
      ],
    });
    expect(html).not.toContain('<script>alert(1)</script>');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    const forms = html.match(/<form[\s\S]*?<\/form>/g) ?? [];
    expect(forms.length).toBeGreaterThanOrEqual(3); // sign out, create, revoke
    for (const form of forms) expect(form).toContain('<input type="hidden" name="_csrf" value="tok&quot;en">');
    // No inline script or style: the CSP allows neither.
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/\sstyle=|<style/);
    expect(html).not.toMatch(/\son[a-z]+=/);
  });

  it('compare CSRF tokens exactly', () => {
    expect(DashboardSessionsService.csrfMatches('abc', 'abc')).toBe(true);
    expect(DashboardSessionsService.csrfMatches('abc', 'abd')).toBe(false);
    expect(DashboardSessionsService.csrfMatches('abc', 'ab')).toBe(false);
    expect(DashboardSessionsService.csrfMatches('abc', undefined)).toBe(false);
    expect(DashboardSessionsService.csrfMatches('abc', ['abc'])).toBe(false);
  });
});
