import { Logger } from '@nestjs/common';
import { PageFailure } from '../browser/page-toolkit';
import { redactor, RunInterrupted, toFailure } from './run-session';

describe('toFailure (how a run ends, in the words of finalizationError)', () => {
  const redact = redactor(['hunter2']);
  const fail = (err: unknown, stepIndex: number | null) => toFailure(err, stepIndex, `step ${stepIndex} (fill "#password")`, redact, 2_000);

  it('words each interruption by where it happened', () => {
    expect(fail(new RunInterrupted('timeout'), 0)).toEqual({
      stage: 'timeout',
      stepIndex: 0,
      message: 'run exceeded its time budget of 2000 ms (during step 0)',
    });
    expect(fail(new RunInterrupted('timeout'), null).message).toBe(
      'run exceeded its time budget of 2000 ms (while loading the first page)',
    );
    expect(fail(new RunInterrupted('browser'), 3)).toEqual({
      stage: 'browser',
      stepIndex: 3,
      message: 'the browser crashed during step 3',
    });
    expect(fail(new RunInterrupted('worker'), null)).toEqual({
      stage: 'worker',
      stepIndex: null,
      message: 'the worker shut down while loading the first page',
    });
    expect(fail(new RunInterrupted('canceled'), 1)).toEqual({ stage: 'canceled', stepIndex: 1, message: 'the run was canceled' });
  });

  it('gives a step failure its label and reason, sensitive values removed', () => {
    expect(fail(new PageFailure('selector not visible within 300 ms'), 1)).toEqual({
      stage: 'step',
      stepIndex: 1,
      message: 'step 1 (fill "#password"): selector not visible within 300 ms',
    });
    expect(fail(new PageFailure('no option "hunter2"'), 2).message).toBe('step 2 (fill "#password"): no option "[redacted]"');
  });

  it('never shows an internal error', () => {
    const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const internal = new TypeError("Cannot read properties of undefined (reading 'x') at /srv/glimpse/dist/runs/run-session.js:10");
    expect(fail(internal, 0)).toEqual({ stage: 'step', stepIndex: 0, message: 'step 0 (fill "#password"): unexpected error' });
    expect(logged).toHaveBeenCalled();
    logged.mockRestore();
  });
});

describe('redactor', () => {
  it('removes a value as typed, URL-encoded and form-encoded, longest first', () => {
    const redact = redactor(['a b&c', 'a b']);
    expect(redact('typed a b&c, url a%20b%26c, form a+b%26c, shorter a b')).toBe(
      'typed [redacted], url [redacted], form [redacted], shorter [redacted]',
    );
    expect(redactor([])('unchanged')).toBe('unchanged');
    expect(redactor([''])('empty values are ignored')).toBe('empty values are ignored');
  });
});
