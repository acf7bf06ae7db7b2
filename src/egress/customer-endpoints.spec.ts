import { Readable } from 'node:stream';
import { AnswerTooLargeError, readAtMost } from './customer-endpoints';

/** A body that never ends: 16 KiB chunks for as long as it is read; counts the chunks it produced. */
function endless(): Readable & { produced: number } {
  const chunk = Buffer.alloc(16 * 1024, 'x');
  const stream = new Readable({
    read() {
      stream.produced++;
      this.push(chunk);
    },
  }) as Readable & { produced: number };
  stream.produced = 0;
  return stream;
}

/** CONTRACT.md, "Tenancy: fair share and isolation": answers of customer-chosen endpoints are read to a bound, then closed. */
describe('readAtMost', () => {
  it('stops an endless body at the bound and destroys it (its connection closes); the bytes kept are the first ones', async () => {
    const body = endless();
    const read = await readAtMost(body, 100_000);
    expect(read.overflowed).toBe(true);
    expect(read.bytes.length).toBe(100_000);
    expect(body.destroyed).toBe(true);
    // Read no further than the bound plus what the stream had buffered ahead (its 16 KiB high-water mark).
    expect(body.produced * 16 * 1024).toBeLessThanOrEqual(100_000 + 2 * 16 * 1024);
  });

  it('reads a body within the bound to its end: exactly the bound is not over it', async () => {
    expect(await readAtMost(Readable.from([Buffer.from('ab'), 'cd']), 4)).toEqual({ bytes: Buffer.from('abcd'), overflowed: false });
    expect((await readAtMost(Readable.from([Buffer.from('abcde')]), 4)).overflowed).toBe(true);
  });

  it('gives up when the signal aborts (a body that trickles forever), with the signal’s reason, and destroys the body', async () => {
    const trickle = new Readable({ read() {} });
    trickle.push('a');
    const controller = new AbortController();
    const reading = readAtMost(trickle, 1024, controller.signal);
    controller.abort(Object.assign(new Error('deadline'), { name: 'TimeoutError' }));
    await expect(reading).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(trickle.destroyed).toBe(true);
  });

  it('passes a stream error on', async () => {
    const failing = new Readable({ read() {} });
    const reading = readAtMost(failing, 1024);
    failing.destroy(Object.assign(new Error('reset'), { code: 'ECONNRESET' }));
    await expect(reading).rejects.toMatchObject({ code: 'ECONNRESET' });
  });

  it('words the overflow for customers', () => {
    expect(new AnswerTooLargeError(1024 * 1024).message).toBe("the endpoint's answer was larger than 1 MiB");
    expect(new AnswerTooLargeError(64 * 1024).message).toBe("the endpoint's answer was larger than 64 KiB");
  });
});
