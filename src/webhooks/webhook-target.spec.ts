import { webhookUrlProblem } from './webhook-target';

describe('webhookUrlProblem', () => {
  it('accepts https, and http only when allowed', () => {
    expect(webhookUrlProblem('https://example.com/hook', false)).toBeNull();
    expect(webhookUrlProblem('http://example.com/hook', false)).toMatch(/https only/);
    expect(webhookUrlProblem('http://example.com/hook', true)).toBeNull();
  });

  it('refuses other schemes, relative URLs and credentials in the URL', () => {
    expect(webhookUrlProblem('ftp://example.com/', true)).toMatch(/scheme ftp:/);
    expect(webhookUrlProblem('/hook', true)).toBe('not an absolute URL');
    expect(webhookUrlProblem('https://user:pass@example.com/', false)).toMatch(/credentials/);
  });
});
