import { DashboardSessionsService } from './dashboard-sessions.service';
import { DashboardViews, fmt } from './dashboard-views';

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
        {
          id: 'key_1',
          name: '<script>alert(1)</script>',
          prefix: 'sk_live_AbCd',
          createdAt: new Date(),
          lastUsedAt: null,
          revokedAt: null,
          used: 0,
          limit: 100,
          remaining: 100,
        },
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

  it('escape what the page of a run reported (console errors, URLs, titles) and carry the CSRF token in the cancel form', () => {
    const hostile = '<img src=x onerror=alert(1)>';
    const run = {
      id: 'run_1',
      status: 'running',
      url: `https://example.com/?q=${hostile}`,
      finalUrl: null,
      pageTitle: hostile,
      videoUrl: null,
      consoleErrorCount: 1,
      networkErrorCount: 1,
      consoleErrors: [{ text: `Uncaught ${hostile}`, url: null, lineNumber: null }],
      networkErrors: [{ url: `https://example.com/${hostile}`, method: 'GET', status: 404, failure: null }],
      steps: [{ index: 0, action: 'click', status: 'failed', durationMs: 10, error: hostile, screenshotUrl: null, result: null }],
      plannedSteps: [
        { label: `click "${hostile}"`, optional: true },
        { label: 'wait 500 ms', optional: false },
      ],
      finalizationError: null,
      failure: null,
      createdAt: '2026-11-23T10:00:00.000Z',
      startedAt: '2026-11-23T10:00:01.000Z',
      completedAt: null,
      apiKeyId: 'key_1',
      keyLabel: hostile,
    };
    const html = views.render('run', {
      signedIn,
      csrfToken: signedIn.csrfToken,
      active: 'runs',
      title: 'Run run_1',
      run,
      notice: null,
      actionError: null,
    });
    expect(html).not.toContain(hostile);
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(html).toContain('action="/dashboard/runs/run_1/cancel"');
    for (const form of html.match(/<form[\s\S]*?<\/form>/g) ?? [])
      expect(form).toContain('<input type="hidden" name="_csrf" value="tok&quot;en">');
    // Step 0 ended; step 1 is the one the browser is on.
    expect(html).toMatch(/data-testid="step-status">running</);
    expect(html).not.toMatch(/\sstyle=|<style/);
  });

  it('format durations as the Runs pages show them', () => {
    expect(fmt.ms(850)).toBe('850 ms');
    expect(fmt.ms(3_740)).toBe('3.7 s');
    expect(fmt.ms(125_000)).toBe('2 min 05 s');
    expect(fmt.duration('2026-11-23T10:00:00.000Z', '2026-11-23T10:00:01.500Z')).toBe('1.5 s');
    expect(fmt.duration('2026-11-23T10:00:00.000Z', null)).toBe('—');
  });

  it('compare CSRF tokens exactly', () => {
    expect(DashboardSessionsService.csrfMatches('abc', 'abc')).toBe(true);
    expect(DashboardSessionsService.csrfMatches('abc', 'abd')).toBe(false);
    expect(DashboardSessionsService.csrfMatches('abc', 'ab')).toBe(false);
    expect(DashboardSessionsService.csrfMatches('abc', undefined)).toBe(false);
    expect(DashboardSessionsService.csrfMatches('abc', ['abc'])).toBe(false);
  });
});
