import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Browser, Page } from 'playwright';
import { adminCliJson } from '../support/admin-cli';
import { PageServer, startPageServer } from '../support/page-server';
import { startTestApp, TestApp } from '../support/test-app';
import { launchTestBrowser, seriousAxeViolations } from '../support/test-browser';

/** Where the 1280×800 PNGs go (the same folder as the other dashboard tests; look at them). */
const SCREENSHOT_DIR = process.env.DASHBOARD_SCREENSHOT_DIR ?? join(tmpdir(), 'glimpse-dashboard-screenshots');
const PASSWORD = 'correct horse battery staple';
/** A cookie value of the uploaded state file: never on any page. */
const SECRET_VALUE = 'never-shown-cookie-value-7Qx';

/** The dashboard's Profiles page and the Monitors pages' create, edit, pause and delete (docs/dashboard.md, docs/profiles.md). */
describe('dashboard: Profiles page and monitor forms', () => {
  let t: TestApp;
  let browser: Browser;
  let site: PageServer;
  let page: Page;
  let key: string;
  const cspViolations: string[] = [];

  async function audit(name: string): Promise<void> {
    await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), caret: 'initial', fullPage: true });
    expect(await seriousAxeViolations(page)).toEqual([]);
  }

  beforeAll(async () => {
    mkdirSync(SCREENSHOT_DIR, { recursive: true });
    site = await startPageServer({
      '/': '<!doctype html><title>Home</title><h1>Home</h1>',
      '/pricing': '<!doctype html><title>Pricing</title>',
    });
    t = await startTestApp();
    browser = await launchTestBrowser(t.config);
    const cli = (...args: string[]): Promise<any> => adminCliJson(t, ...args);
    const email = `profiles-${Math.random().toString(36).slice(2)}@test.local`;
    const account = await cli('account:create', '--email', email, '--plan', 'pro');
    const user = await cli('user:create', '--account', account.id, '--email', email);
    key = (await cli('key:create', '--account', account.id, '--name', 'site-monitor')).key;
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, baseURL: t.baseUrl });
    page = await context.newPage();
    page.on('console', (msg) => {
      if (/Content Security Policy|Refused to/i.test(msg.text())) cspViolations.push(`${page.url()}: ${msg.text().slice(0, 160)}`);
    });
    await page.goto(user.setPasswordUrl);
    await page.getByLabel('New password').fill(PASSWORD);
    await page.getByLabel('Repeat the password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await page.waitForURL('**/dashboard');
  });

  afterAll(async () => {
    await browser?.close();
    await site?.close();
    await t?.close();
  });

  afterEach(() => {
    expect(cspViolations.splice(0)).toEqual([]);
  });

  it('adds a profile from a Playwright state file (values never shown), refuses a file that is not JSON, and deletes it', async () => {
    await page.goto('/dashboard/profiles');
    expect(await page.getByRole('link', { name: 'Profiles', exact: true }).getAttribute('aria-current')).toBe('page');
    expect(await page.getByText('No profiles yet.').count()).toBe(1);

    const dir = mkdtempSync(join(tmpdir(), 'glimpse-state-'));
    const file = join(dir, 'state.json');
    writeFileSync(
      file,
      JSON.stringify({
        cookies: [
          {
            name: 'session',
            value: SECRET_VALUE,
            domain: '127.0.0.1',
            path: '/',
            expires: -1,
            httpOnly: true,
            secure: false,
            sameSite: 'Lax',
          },
          {
            name: 'tracker',
            value: 'x',
            domain: '.ads.example.net',
            path: '/',
            expires: -1,
            httpOnly: false,
            secure: false,
            sameSite: 'None',
          },
        ],
        origins: [{ origin: site.url, localStorage: [{ name: 'token', value: SECRET_VALUE }] }],
      }),
    );
    await page.getByLabel('Name').fill('Staging admin');
    await page.getByLabel(/Allowed domains/).fill('127.0.0.1');
    await page.getByLabel(/State file \(optional/).setInputFiles(file);
    await page.waitForFunction(() => (document.getElementById('prf-state') as HTMLTextAreaElement).value.length > 0);
    await page.getByRole('button', { name: 'Add profile' }).click();
    await page.getByText(/Profile prf_\w+ added: 1 cookie and 1 site with local storage kept/).waitFor();
    const row = page.locator('#profiles-table tbody tr');
    expect(await row.count()).toBe(1);
    expect(await row.textContent()).toContain('Staging admin');
    expect(await page.content()).not.toContain(SECRET_VALUE);
    await audit('40-profiles');

    // Not JSON: the message, and the form keeps the name and domains but never the file's text.
    await page.getByLabel('Name').fill('Broken');
    await page.getByLabel(/Allowed domains/).fill('example.com');
    await page.getByLabel('State file contents').fill('{"cookies": [ not json');
    await page.getByRole('button', { name: 'Add profile' }).click();
    await page.getByText('The state file is not JSON').waitFor();
    expect(await page.getByLabel('Name').inputValue()).toBe('Broken');
    expect(await page.getByLabel('State file contents').inputValue()).toBe('');
    // An invalid domain: the API's message.
    await page.getByLabel(/Allowed domains/).fill('Not A Host');
    await page.getByRole('button', { name: 'Add profile' }).click();
    await page
      .getByText(/allowedDomains/)
      .first()
      .waitFor();

    // A state well over the dashboard's usual 64 KiB form limit is accepted (a state may have up to 1 MiB of JSON).
    const big = { cookies: Array.from({ length: 30 }, (_, i) => ({ name: `c${i}`, value: 'v'.repeat(10_000), domain: 'example.com' })) };
    await page.getByLabel('Name').fill('Large state');
    await page.getByLabel(/Allowed domains/).fill('example.com');
    await page.getByLabel('State file contents').fill(JSON.stringify(big));
    await page.getByRole('button', { name: 'Add profile' }).click();
    await page.getByText(/added: 30 cookies and 0 sites with local storage kept/).waitFor();
    const large = (await t.request('GET', '/v1/profiles', { key })).body.data.find((p: any) => p.name === 'Large state');
    expect(large.sizeBytes).toBeGreaterThan(300_000);
    await t.request('DELETE', `/v1/profiles/${large.id}`, { key });

    const created = await t.request('GET', '/v1/profiles', { key });
    expect(created.body.data.map((p: any) => p.name)).toEqual(['Staging admin']);
    await page.goto('/dashboard/profiles');
    await page.getByText('Delete…').click();
    await page.getByRole('button', { name: 'Delete profile' }).click();
    await page.getByText('No profiles yet.').waitFor();
    expect((await t.request('GET', '/v1/profiles', { key })).body.data).toEqual([]);
  });

  it('creates, edits, pauses and deletes a monitor (URL, schedule, threshold, ignored selectors, profile)', async () => {
    const profile = await t.request('POST', '/v1/profiles', { key, body: { name: 'Shop login', allowedDomains: ['127.0.0.1'] } });
    expect(profile.status).toBe(201);
    await page.goto('/dashboard/monitors');
    const create = page.locator('#create-monitor');
    await create.getByLabel('Page URL').fill(`${site.url}/pricing`);
    await create.getByLabel(/^Every/).fill('3600');
    await create.getByLabel(/Pixel threshold/).fill('0.2');
    await create.getByLabel(/Ignore selectors/).fill('.clock\n#ads');
    await create.getByLabel(/^Profile/).selectOption(profile.body.id);
    await create.getByLabel(/Logged-in marker/).fill('#account');
    await create.getByLabel(/Description/).fill('Pricing page');
    await audit('41-monitors-create-form');
    await create.getByRole('button', { name: 'Create monitor' }).click();
    await page.getByText('Monitor created; its first check is due now.').waitFor();
    const listed = await t.request('GET', '/v1/monitors', { key });
    expect(listed.body.data).toHaveLength(1);
    const monitor = listed.body.data[0];
    expect(monitor).toMatchObject({
      url: `${site.url}/pricing`,
      description: 'Pricing page',
      schedule: { intervalSeconds: 3600 },
      options: { profile: profile.body.id, profileCheck: { selector: '#account' } },
      diff: { threshold: 0.2, ignoreSelectors: ['.clock', '#ads'] },
      enabled: true,
    });
    expect(await page.locator(`#monitors-table tr[data-monitor-id="${monitor.id}"]`).textContent()).toContain('Pricing page');
    await audit('42-monitors-list');

    // A host outside the profile's domains: the API's refusal on the form, nothing created.
    await create.getByLabel('Page URL').fill(`http://localhost:${site.port}/pricing`);
    await create.getByLabel(/^Every/).fill('3600');
    await create.getByLabel(/^Profile/).selectOption(profile.body.id);
    await create.getByRole('button', { name: 'Create monitor' }).click();
    await page.getByTestId('monitor-error').waitFor();
    expect(await page.getByTestId('monitor-error').textContent()).toContain("not within the profile's allowedDomains");
    expect((await t.request('GET', '/v1/monitors', { key })).body.data).toHaveLength(1);

    // Edit on the monitor's page: another URL, schedule and threshold, no profile.
    await page.goto(`/dashboard/monitors/${monitor.id}`);
    const edit = page.locator('#edit-monitor');
    expect(await edit.getByLabel('Page URL').inputValue()).toBe(`${site.url}/pricing`);
    expect(await edit.getByLabel(/^Profile/).inputValue()).toBe(profile.body.id);
    await edit.getByLabel('Page URL').fill(`${site.url}/`);
    await edit.getByLabel(/^Every/).fill('7200');
    await edit.getByLabel(/Pixel threshold/).fill('0.05');
    await edit.getByLabel(/Ignore selectors/).fill('.clock');
    await edit.getByLabel(/^Profile/).selectOption('');
    await edit.getByLabel(/Logged-in marker/).fill('');
    await edit.getByRole('button', { name: 'Save monitor' }).click();
    await page.getByText('Monitor saved.').waitFor();
    const saved = (await t.request('GET', `/v1/monitors/${monitor.id}`, { key })).body;
    expect(saved).toMatchObject({
      url: `${site.url}/`,
      schedule: { intervalSeconds: 7200 },
      diff: { threshold: 0.05, ignoreSelectors: ['.clock'] },
    });
    expect(saved.options.profile).toBeUndefined();
    expect(saved.options.profileCheck).toBeUndefined();
    await audit('43-monitor-edit');

    // A schedule below the minimum: the API's message on the form, nothing changed.
    await edit.getByLabel(/^Every/).fill('5');
    await edit.getByRole('button', { name: 'Save monitor' }).click();
    await page.getByTestId('monitor-error').waitFor();
    expect((await t.request('GET', `/v1/monitors/${monitor.id}`, { key })).body.schedule).toEqual({ intervalSeconds: 7200 });

    // Pause, then delete.
    await page.goto('/dashboard/monitors');
    await page.locator(`#monitors-table tr[data-monitor-id="${monitor.id}"]`).getByRole('button', { name: 'Pause' }).click();
    await page.getByText('Monitor paused.').waitFor();
    expect((await t.request('GET', `/v1/monitors/${monitor.id}`, { key })).body.pausedReason).toBe('manual');
    await page.goto(`/dashboard/monitors/${monitor.id}`);
    await page.getByText('Delete…').click();
    await page.getByRole('button', { name: 'Delete monitor' }).click();
    await page.getByText('Monitor deleted.').waitFor();
    expect((await t.request('GET', `/v1/monitors/${monitor.id}`, { key })).status).toBe(404);
  });
});
