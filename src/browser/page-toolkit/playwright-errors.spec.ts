import type { Page } from 'playwright';
import { errors } from 'playwright';
import { classifyPlaywrightError, describeActionFailure, firstLine, PAGE_MESSAGES, redactInternals, truncate } from './playwright-errors';

/** Playwright's ANSI-dimmed call-log line. */
const log = (line: string) => `\u001b[2m  - ${line}\u001b[22m\n`;

/** Error messages as Playwright 1.x prints them against Debian's chromium-headless-shell (recorded here). */
const SHAPES = {
  refused:
    'page.goto: net::ERR_CONNECTION_REFUSED at http://127.0.0.1:59999/\nCall log:\n' +
    log('navigating to "http://127.0.0.1:59999/", waiting until "load"'),
  tunnel:
    'page.goto: net::ERR_TUNNEL_CONNECTION_FAILED at https://10.0.0.1/\nCall log:\n' +
    log('navigating to "https://10.0.0.1/", waiting until "commit"'),
  gotoTimeout:
    'page.goto: Timeout 2000ms exceeded.\nCall log:\n' + log('navigating to "http://127.0.0.1:4000/slow", waiting until "commit"'),
  clickTimeout: 'locator.click: Timeout 300ms exceeded.\nCall log:\n' + log("waiting for locator('#nope').first()"),
  waitForUrlTimeout:
    'page.waitForURL: Timeout 300ms exceeded.\n=========================== logs ===========================\nwaiting for navigation to "**/x" until "commit"\n============================================================',
  invalidSelector:
    'locator.click: Unexpected token "#" while parsing css selector "##". Did you mean to CSS.escape it?\nCall log:\n' +
    log('waiting for ## >> nth=0'),
  notCheckable:
    'locator.check: Error: Not a checkbox or radio button\nCall log:\n' +
    log("waiting for locator('#i').first()") +
    log('locator resolved to <input id="i"/>'),
  notEditable:
    'locator.fill: Error: Element is not an <input>, <textarea> or [contenteditable] element\nCall log:\n' +
    log("waiting for locator('#b').first()"),
  unknownKey: 'keyboard.press: Unknown key: "Foo"',
  unknownKeyLocator:
    'locator.press: Unknown key: "Foo"\nCall log:\n' + log("waiting for locator('#i').first()") + log('elementHandle.press("Foo")'),
  closed: 'page.goto: Target page, context or browser has been closed',
  closedLocator: 'locator.click: Target page, context or browser has been closed',
  scriptThrew:
    'page.evaluate: Error: boom\n    at eval (eval at evaluate (:370:30), <anonymous>:1:22)\n    at UtilityScript.evaluate (<anonymous>:370:30)',
  launch:
    'browserType.launch: Executable does not exist at /usr/lib/chromium/chrome\n=========================== logs ===========================\n/usr/lib/chromium/chrome --no-sandbox',
};

describe('classifyPlaywrightError (the vocabulary of browser failures)', () => {
  const kind = (message: string) => classifyPlaywrightError(new Error(message)).kind;

  it('reads network failures and keeps the net::ERR_ name', () => {
    expect(classifyPlaywrightError(new Error(SHAPES.refused))).toMatchObject({ kind: 'network', netError: 'net::ERR_CONNECTION_REFUSED' });
    expect(classifyPlaywrightError(new Error(SHAPES.tunnel))).toMatchObject({
      kind: 'network',
      netError: 'net::ERR_TUNNEL_CONNECTION_FAILED',
    });
  });

  it('reads timeouts of every call, and Playwright TimeoutError objects', () => {
    expect(kind(SHAPES.gotoTimeout)).toBe('timeout');
    expect(kind(SHAPES.clickTimeout)).toBe('timeout');
    expect(kind(SHAPES.waitForUrlTimeout)).toBe('timeout');
    expect(classifyPlaywrightError(new errors.TimeoutError('waiting failed')).kind).toBe('timeout');
  });

  it('reads element errors', () => {
    expect(kind(SHAPES.invalidSelector)).toBe('invalidSelector');
    expect(kind(SHAPES.notCheckable)).toBe('notCheckable');
    expect(kind(SHAPES.notEditable)).toBe('notEditable');
    expect(kind(SHAPES.unknownKey)).toBe('unknownKey');
    expect(kind(SHAPES.unknownKeyLocator)).toBe('unknownKey');
  });

  it('reads a page, context or browser that went away', () => {
    expect(kind(SHAPES.closed)).toBe('closed');
    expect(kind(SHAPES.closedLocator)).toBe('closed');
    expect(kind('browser.newContext: Browser closed.')).toBe('closed');
  });

  it('reads only the head: a call log naming a contenteditable element is still a timeout', () => {
    const timeout =
      'locator.click: Timeout 300ms exceeded.\nCall log:\n' +
      log("waiting for locator('#d')") +
      log('locator resolved to <div contenteditable id="d">x</div>');
    expect(kind(timeout)).toBe('timeout');
    const other =
      'locator.click: Element is outside of the viewport\nCall log:\n' +
      log('locator resolved to <div contenteditable id="d">Target closed</div>');
    expect(classifyPlaywrightError(new Error(other))).toMatchObject({ kind: 'other', text: 'Element is outside of the viewport' });
  });

  it('gives anything else as its first line, without the API prefix, the stack or paths', () => {
    expect(classifyPlaywrightError(new Error(SHAPES.scriptThrew))).toEqual({ kind: 'other', netError: null, text: 'Error: boom' });
    expect(classifyPlaywrightError(new Error(SHAPES.launch)).text).toBe('Executable does not exist at [internal]');
    expect(classifyPlaywrightError('a string').text).toBe('a string');
  });
});

describe('describeActionFailure (a step action that failed, in customer-safe words)', () => {
  /** A page whose element under `visible` is visible; the only page call the description makes. */
  const pageWith = (visible: boolean) => ({ locator: () => ({ first: () => ({ isVisible: async () => visible }) }) }) as unknown as Page;
  const describe_ = (message: string, failed: Partial<Parameters<typeof describeActionFailure>[2]>, visible = false) =>
    describeActionFailure(new Error(message), pageWith(visible), { action: 'click', timeoutMs: 300, ...failed });

  it('names the element errors', async () => {
    expect(await describe_(SHAPES.invalidSelector, { selector: '##' })).toBe('invalid selector');
    expect(await describe_(SHAPES.notCheckable, { action: 'check', selector: '#i' })).toBe('the element is not a checkbox or radio button');
    expect(await describe_(SHAPES.notEditable, { action: 'fill', selector: '#b' })).toBe(
      'the element is not an input, textarea or contenteditable element',
    );
    expect(await describe_(SHAPES.unknownKey, { action: 'press', key: 'Foo' })).toBe('unknown key "Foo"');
  });

  it('tells a missing element from one that was there but not ready', async () => {
    expect(await describe_(SHAPES.clickTimeout, { selector: '#nope' }, false)).toBe('selector not visible within 300 ms');
    expect(await describe_(SHAPES.clickTimeout, { selector: '#b' }, true)).toBe(
      'the element was not ready for click within 300 ms (disabled, covered or moving)',
    );
    expect(await describe_(SHAPES.clickTimeout, { action: 'press', key: 'Enter' })).toBe('timed out after 300 ms');
  });

  it('never quotes the call log (a fill echoes its value there) and cuts long texts', async () => {
    const fill = 'locator.fill: Element is not attached to the DOM\nCall log:\n' + log('fill("hunter2 secret")');
    expect(await describe_(fill, { action: 'fill', selector: '#p' })).toBe('Element is not attached to the DOM');
    const long = await describe_(`locator.click: ${'x'.repeat(1000)}`, { selector: '#a' });
    expect(long).toHaveLength(300);
    expect(long.endsWith('…')).toBe(true);
  });
});

describe('the words', () => {
  it('are the ones the contract shows', () => {
    expect(PAGE_MESSAGES.navigationTimedOut(2000)).toBe('navigation timed out after 2000 ms');
    expect(PAGE_MESSAGES.selectorNotVisible(1500)).toBe('selector not visible within 1500 ms');
  });

  it('strip the API prefix once, redact paths but keep URLs, and cut with a mark', () => {
    expect(firstLine('page.evaluate: Error: boom\n    at x')).toBe('Error: boom');
    expect(redactInternals('ENOENT: open /var/lib/glimpse/files/a.png')).toBe('ENOENT: open [internal]');
    expect(redactInternals('net::ERR_ABORTED at http://example.com/a/b.png')).toBe('net::ERR_ABORTED at http://example.com/a/b.png');
    expect(truncate('abcdef', 4)).toBe('abc…');
    expect(truncate('abc', 4)).toBe('abc');
  });
});
