import { WakeableWaits } from './wakeable-waits';

describe('WakeableWaits', () => {
  it('ends a wait at wakeAll, at stop, or after its time', async () => {
    const stop = new AbortController();
    const waits = new WakeableWaits(stop.signal);
    const order: string[] = [];
    const woken = waits.wait(60_000).then(() => order.push('woken'));
    waits.wakeAll();
    await woken;
    const stopped = waits.wait(60_000).then(() => order.push('stopped'));
    stop.abort();
    await stopped;
    await new WakeableWaits(new AbortController().signal).wait(5).then(() => order.push('timed out'));
    expect(order).toEqual(['woken', 'stopped', 'timed out']);
  });
});
