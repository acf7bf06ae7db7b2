import { errors } from 'playwright';
import { BrowserGoneError, BrowserPoolClosedError, BrowserUnavailableError, LeaseBudgetExceededError } from '../browser/browser-errors';
import { PageFailure } from '../browser/page-toolkit';
import { AnimationTooLargeError } from '../recording/animation-encoding';
import { VideoEncodingError } from '../recording/ffmpeg';
import { captureFailure } from './capture-engine';

describe('captureFailure (the job error of a capture that failed)', () => {
  const message = (err: unknown) => captureFailure(err, 2_000);

  it('keeps the words of the page toolkit', () => {
    expect(message(new PageFailure('Target not allowed: 10.0.0.1 resolves to 10.0.0.1 (private)'))).toEqual({
      message: 'Target not allowed: 10.0.0.1 resolves to 10.0.0.1 (private)',
      unexpected: false,
    });
  });

  it('says what happened to the browser, never its internals', () => {
    const gone = new BrowserGoneError('the browser crashed');
    expect(message(gone).message).toBe('the browser crashed during the capture');
    gone.attempts = 2;
    expect(message(gone).message).toBe('the browser crashed during the capture, twice');
    expect(message(new BrowserGoneError('the page crashed')).message).toBe('the page crashed during the capture');
    expect(message(new LeaseBudgetExceededError(95_000)).message).toBe('capture exceeded its time budget of 95000 ms');
    expect(message(new BrowserPoolClosedError()).message).toBe('the capture service is shutting down');
    expect(message(new BrowserUnavailableError('CHROMIUM_PATH="/opt/chrome": no such executable file'))).toEqual({
      message: 'the capture browser could not be started',
      unexpected: false,
    });
  });

  it('an animation over GIF_MAX_BYTES says so; an ffmpeg failure is a fixed text, its own words for the operators', () => {
    expect(message(new AnimationTooLargeError(15_728_640))).toEqual({ message: 'animation larger than 15728640 bytes', unexpected: false });
    expect(message(new VideoEncodingError('ffmpeg exited with 1: /tmp/glimpse-recording-x/frames.mjpeg: Invalid data'))).toEqual({
      message: 'the animation could not be encoded',
      unexpected: true,
    });
  });

  it('reads Playwright errors with the toolkit’s vocabulary', () => {
    expect(message(new errors.TimeoutError('page.evaluate: Timeout 2000ms exceeded.')).message).toBe('navigation timed out after 2000 ms');
    expect(message(new Error('page.goto: net::ERR_NAME_NOT_RESOLVED at http://nowhere.invalid/')).message).toBe(
      'net::ERR_NAME_NOT_RESOLVED',
    );
    expect(message(new Error('page.evaluate: Target page, context or browser has been closed')).message).toBe(
      'the browser closed during the capture',
    );
  });

  it('shows only the first line of anything else, paths redacted, and marks it unexpected', () => {
    const protocol = new Error(
      'cdpSession.send: Protocol error (Page.captureScreenshot): Unable to capture screenshot\n    at /srv/glimpse/dist/x.js:1:2',
    );
    expect(message(protocol)).toEqual({
      message: 'Protocol error (Page.captureScreenshot): Unable to capture screenshot',
      unexpected: true,
    });
    expect(message(new Error('ENOENT: no such file or directory, open /var/lib/glimpse/a.png')).message).toBe(
      'no such file or directory, open [internal]',
    );
  });
});
