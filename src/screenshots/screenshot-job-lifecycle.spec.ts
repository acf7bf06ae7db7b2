import { QueryFailedError } from 'typeorm';
import { BrowserUnavailableError } from '../browser/browser-errors';
import { CaptureError, redactInternals } from '../capture/capture-engine';
import { CustomerMessage, INTERNAL_FAILURE_MESSAGE, STORAGE_FAILURE_MESSAGE } from '../results/customer-messages';
import { customerSafeError } from './screenshot-job-lifecycle';

/** A real file system error, as `fs` raises it (path, syscall and code included). */
async function fsError(): Promise<unknown> {
  const { writeFile } = await import('node:fs/promises');
  return writeFile('/nonexistent-dir-for-glimpse/data/files/abc.png.partial', 'x').catch((err: unknown) => err);
}

describe('customerSafeError (the job error and screenshot.failed text)', () => {
  it('keeps the message of a capture failure', () => {
    expect(customerSafeError(new CaptureError('net::ERR_CONNECTION_REFUSED'))).toBe('net::ERR_CONNECTION_REFUSED');
    expect(customerSafeError(new CustomerMessage('capture did not finish: the worker stopped'))).toBe(
      'capture did not finish: the worker stopped',
    );
  });

  it('turns a storage failure into a fixed message without the path', async () => {
    const err = await fsError();
    expect((err as Error).message).toContain('/nonexistent-dir-for-glimpse/');
    expect(customerSafeError(err)).toBe(STORAGE_FAILURE_MESSAGE);
  });

  it('turns a database failure into a fixed message without SQL', () => {
    const err = new QueryFailedError(
      'UPDATE "screenshot_jobs" SET "status" = $1 WHERE id = $2',
      ['done', 'scr_1'],
      new Error('relation "screenshot_jobs" does not exist'),
    );
    const text = customerSafeError(err);
    expect(text).toBe(INTERNAL_FAILURE_MESSAGE);
    expect(text).not.toMatch(/screenshot_jobs|UPDATE|SET/);
  });

  it('turns browser set-up failures and unknown errors (with their stacks) into a fixed message', () => {
    expect(customerSafeError(new BrowserUnavailableError('CHROMIUM_PATH="/opt/chrome/chrome": no such executable file'))).toBe(
      INTERNAL_FAILURE_MESSAGE,
    );
    const err = new TypeError("Cannot read properties of undefined (reading 'x')");
    expect(err.stack).toContain('/');
    expect(customerSafeError(err)).toBe(INTERNAL_FAILURE_MESSAGE);
    expect(customerSafeError('a string')).toBe(INTERNAL_FAILURE_MESSAGE);
  });

  it('redacts paths even inside capture messages, and keeps URLs', () => {
    expect(customerSafeError(new CaptureError('Executable does not exist at /usr/lib/chromium/chrome'))).toBe(
      'Executable does not exist at [internal]',
    );
    expect(redactInternals('net::ERR_ABORTED at http://example.com/a/b.png')).toBe('net::ERR_ABORTED at http://example.com/a/b.png');
    expect(redactInternals('Target not allowed: 10.0.0.1 resolves to 10.0.0.1 (private)')).toBe(
      'Target not allowed: 10.0.0.1 resolves to 10.0.0.1 (private)',
    );
  });
});
