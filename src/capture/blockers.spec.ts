import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { blockUrlsMatcher } from './blockers';

describe('blockUrlsMatcher (blockUrls, CONTRACT.md "Capture options, second set"; each glob is compileGlob, common/url-glob.spec.ts)', () => {
  it('blocks when any of the globs matches', () => {
    const blocked = blockUrlsMatcher(['*.mp4', '*://*.doubleclick.net/*']);
    expect(blocked('https://ad.doubleclick.net/x.js')).toBe(true);
    expect(blocked('https://example.com/clip.mp4')).toBe(true);
    expect(blocked('https://example.com/clip.webm')).toBe(false);
    expect(blockUrlsMatcher([])('https://example.com/')).toBe(false);
  });
});

/**
 * CONTRACT.md "Tenancy: fair share and isolation": no input runs super-linear on a worker. The matcher is
 * loaded in a worker thread, so a matcher that backtracks is stopped (terminated) at the limit and the
 * test fails instead of holding this process; loading the module is not timed.
 */
describe('blockUrls on hostile globs (bounded in a worker thread)', () => {
  const LIMIT_MS = 2_000;
  let worker: Worker;

  beforeAll(async () => {
    worker = new Worker(
      `const { parentPort, workerData } = require('node:worker_threads');
       require('ts-node').register({ transpileOnly: true, swc: true, project: workerData.project });
       const { blockUrlsMatcher } = require(workerData.module);
       parentPort.on('message', ({ globs, url }) => parentPort.postMessage(blockUrlsMatcher(globs)(url)));
       parentPort.postMessage('ready');`,
      {
        eval: true,
        workerData: { project: join(__dirname, '..', '..', 'tsconfig.json'), module: join(__dirname, 'blockers.ts') },
      },
    );
    await new Promise((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
  }, 30_000);

  afterAll(() => worker?.terminate());

  /** The matcher's answer, or 'timed out' (the worker terminated) when it takes longer than {@link LIMIT_MS}. */
  function matchWithin(globs: string[], url: string): Promise<boolean | 'timed out'> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        void worker.terminate();
        resolve('timed out');
      }, LIMIT_MS);
      worker.once('message', (answer: boolean) => {
        clearTimeout(timer);
        resolve(answer);
      });
      worker.once('error', reject);
      worker.postMessage({ globs, url });
    });
  }

  it(`answers *a*a*a*a*a*a*a*aZ against an image path of 74 a's within ${LIMIT_MS} ms (a backtracking RegExp takes minutes)`, async () => {
    const url = `http://127.0.0.1:8080/${'a'.repeat(74)}.png`;
    expect(await matchWithin(['*a*a*a*a*a*a*a*aZ'], url)).toBe(false);
    // Ten stars more, 50 globs of them, a URL of 100,000 characters: still linear.
    const globs = Array.from({ length: 50 }, (_, i) => `*${'a*'.repeat(18)}${i}Z`);
    expect(await matchWithin(globs, `http://127.0.0.1:8080/${'a'.repeat(100_000)}.png`)).toBe(false);
    expect(await matchWithin(globs, `http://127.0.0.1:8080/${'a'.repeat(100)}7Z`)).toBe(true);
  });
});
