import { Logger } from '@nestjs/common';
import { EventEmitter } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { PageFailure } from '../browser/page-toolkit';
import { interrupter, redactor, RunInterrupted, toFailure } from './run-session';

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

describe('interrupter: a step against the interruptions of its run', () => {
  const page = () => new EventEmitter() as unknown as Parameters<typeof interrupter>[0];
  const HOUR_MS = 3_600_000;

  it('rejects the step with the stage of the first interruption, and ends work the step left running', async () => {
    const cancel = new AbortController();
    const interruption = interrupter(page(), Date.now() + HOUR_MS, cancel.signal);
    // A `wait` step of an hour, as the run performs it: on the run's signal.
    const wait = sleep(HOUR_MS, undefined, { signal: interruption.signal });
    const raced = interruption.race(wait);
    cancel.abort('canceled');
    await expect(raced).rejects.toEqual(new RunInterrupted('canceled'));
    // The timer itself is gone, not merely outraced: the wait rejects at once.
    await expect(wait).rejects.toMatchObject({ name: 'AbortError' });
    expect(interruption.signal.reason).toEqual(new RunInterrupted('canceled'));
    interruption.dispose();
  });

  it('names a page crash "browser" and a stopping worker "worker"', async () => {
    const crashing = page();
    const crashed = interrupter(crashing, Date.now() + HOUR_MS);
    const onCrash = crashed.race(new Promise(() => undefined));
    (crashing as unknown as EventEmitter).emit('crash');
    await expect(onCrash).rejects.toEqual(new RunInterrupted('browser'));
    crashed.dispose();

    const stopping = new AbortController();
    const stopped = interrupter(page(), Date.now() + HOUR_MS, stopping.signal);
    const onStop = stopped.race(new Promise(() => undefined));
    stopping.abort('worker');
    await expect(onStop).rejects.toEqual(new RunInterrupted('worker'));
    stopped.dispose();
  });

  it('ends the signal when the run is over without an interruption', async () => {
    const interruption = interrupter(page(), Date.now() + HOUR_MS);
    await expect(interruption.race(Promise.resolve('done'))).resolves.toBe('done');
    const wait = sleep(HOUR_MS, undefined, { signal: interruption.signal });
    interruption.dispose();
    await expect(wait).rejects.toMatchObject({ name: 'AbortError' });
  });
});
