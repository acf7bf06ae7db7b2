import { ConfigError, loadConfig } from './app-config';

const base = {};

describe('loadConfig', () => {
  it('applies the defaults of CONTRACT.md', () => {
    const config = loadConfig(base);
    expect(config).toMatchObject({
      port: 3000,
      publicBaseUrl: 'http://localhost:3000',
      ssrfAllowPrivate: false,
      webhookAllowHttp: false,
      webhookRetryDelaysS: [60, 300, 1800, 7200, 43200],
      webhookTimeoutMs: 15000,
      resultTtlDays: 30,
      legacyFreeCap: 1000,
      workerMode: 'inline',
      captureTimeoutMs: 30000,
    });
  });

  it('parses typed values and strips a trailing slash of PUBLIC_BASE_URL', () => {
    const config = loadConfig({ ...base, PORT: '8080', SSRF_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_DELAYS: '0.2, 1,2', PUBLIC_BASE_URL: 'https://shots.example.com/' });
    expect(config).toMatchObject({ port: 8080, ssrfAllowPrivate: true, webhookRetryDelaysS: [0.2, 1, 2], publicBaseUrl: 'https://shots.example.com' });
  });

  it('reports every invalid variable at once, one line each', () => {
    let error: unknown;
    try {
      loadConfig({ ...base, PORT: 'eighty', WORKER_MODE: 'sometimes', DATABASE_URL: 'mysql://x', SSRF_ALLOW_PRIVATE: 'maybe', WEBHOOK_RETRY_DELAYS: '1,,2' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems;
    expect(problems).toHaveLength(5);
    for (const name of ['PORT', 'WORKER_MODE', 'DATABASE_URL', 'SSRF_ALLOW_PRIVATE', 'WEBHOOK_RETRY_DELAYS']) {
      expect(problems.filter((p) => p.startsWith(`${name}=`))).toHaveLength(1);
    }
    expect(problems.every((p) => !p.includes('\n'))).toBe(true);
  });

  it('needs no browser: CHROMIUM_PATH is passed on as set, and checked by the browser pool when it launches', () => {
    expect(loadConfig({}).chromiumPath).toBeNull();
    expect(loadConfig({ CHROMIUM_PATH: '/nowhere/chromium' }).chromiumPath).toBe('/nowhere/chromium');
  });
});
