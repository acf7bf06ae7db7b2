import type { Queue } from 'bull';
import { EventEmitter } from 'node:events';
import { DurableQueueService, RepeatableWork } from './durable-queue.service';
import { PeriodicJob, STALLED_TOO_OFTEN, WorkProcessor } from './queue-processor';
import { StateWriteAborted } from './state-writes';

/** The part of a Bull queue the processor base uses, recording what it was asked (no Redis). */
class RecordingQueue extends EventEmitter {
  readonly name = 'test-queue';
  readonly handlers = new Map<string, { concurrency: number; handler: (job: { data: unknown }) => Promise<unknown> }>();
  paused = 0;

  process(name: string, concurrency: number, handler: (job: { data: unknown }) => Promise<unknown>): Promise<void> {
    this.handlers.set(name, { concurrency, handler });
    return new Promise(() => undefined);
  }

  async pause(): Promise<void> {
    this.paused++;
  }
}

/** A database error as node-postgres raises it when the server is unreachable. */
function unreachable(): Error {
  return Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
}

/** A processor whose steps are scripted by the test and recorded. */
class ScriptedProcessor extends WorkProcessor<{ id: string }, string, string, string> {
  protected readonly jobName = 'piece';
  readonly calls: string[] = [];
  claimFailures = 0;
  finishFailures = 0;
  claimable = true;
  /** Resolves the work of the current piece when set. */
  release: (() => void) | null = null;
  holdWork = false;

  protected readonly queue: Queue;

  constructor(queue: RecordingQueue, runProcessors: boolean, durableQueues: DurableQueueService) {
    super();
    this.queue = queue as unknown as Queue;
    // Set as Nest sets the base's injected properties, after construction.
    Object.assign(this, { runProcessors, durableQueues });
  }

  protected concurrency(): number {
    return 3;
  }
  protected shutdownWaitMs(): number {
    return 5_000;
  }
  protected inputOf(data: { id: string }): string {
    return data.id;
  }
  protected idOf(id: string): string {
    return id;
  }
  protected override periodicJobs(): PeriodicJob[] {
    return [{ jobName: 'tidy', everyMs: 60_000, run: async () => this.calls.push('tidy') }];
  }
  protected async claim(id: string): Promise<string | null> {
    this.calls.push(`claim ${id}`);
    if (this.claimFailures-- > 0) throw unreachable();
    return this.claimable ? `claimed ${id}` : null;
  }
  protected async work(claimed: string): Promise<string> {
    this.calls.push(`work ${claimed}`);
    if (this.holdWork) await new Promise<void>((resolve) => (this.release = resolve));
    return `outcome of ${claimed}`;
  }
  protected async finish(claimed: string, outcome: string): Promise<void> {
    this.calls.push(`finish ${claimed} with ${outcome}`);
    if (this.finishFailures-- > 0) throw unreachable();
  }
  protected override async abandon(id: string): Promise<void> {
    this.calls.push(`abandon ${id}`);
  }
  holds(id: string): boolean {
    return this.isInFlight(id);
  }
}

describe('WorkProcessor (claim, work, finish, retry)', () => {
  let queue: RecordingQueue;
  let repeatables: RepeatableWork[];
  let durableQueues: DurableQueueService;

  beforeEach(() => {
    queue = new RecordingQueue();
    repeatables = [];
    durableQueues = { registerRepeatable: (r: RepeatableWork) => repeatables.push(r) } as unknown as DurableQueueService;
  });

  it('starts nothing in a process that does not run processors', () => {
    new ScriptedProcessor(queue, false, durableQueues).onApplicationBootstrap();
    expect(queue.handlers.size).toBe(0);
    expect(repeatables).toEqual([]);
  });

  it('registers its work with its concurrency and its periodic jobs with the reconciler', async () => {
    const processor = new ScriptedProcessor(queue, true, durableQueues);
    processor.onApplicationBootstrap();
    expect(queue.handlers.get('piece')?.concurrency).toBe(3);
    expect(queue.handlers.get('tidy')?.concurrency).toBe(1);
    expect(repeatables.map((r) => [r.jobName, r.everyMs])).toEqual([['tidy', 60_000]]);
    await queue.handlers.get('piece')?.handler({ data: { id: 'a' } });
    expect(processor.calls).toEqual(['claim a', 'work claimed a', 'finish claimed a with outcome of claimed a']);
  });

  it('handles at most its concurrency of queue jobs at once, whatever Bull hands it (its fetch loops add up per queue)', async () => {
    const processor = new ScriptedProcessor(queue, true, durableQueues);
    processor.holdWork = true;
    processor.onApplicationBootstrap();
    const handler = queue.handlers.get('piece')!.handler;
    for (const id of ['e1', 'e2', 'e3', 'e4']) void handler({ data: { id } });
    await new Promise((resolve) => setImmediate(resolve));
    expect(processor.calls.filter((c) => c.startsWith('claim'))).toEqual(['claim e1', 'claim e2', 'claim e3']);
    processor.release?.();
    await new Promise((resolve) => setImmediate(resolve));
    expect(processor.calls).toContain('claim e4');
  });

  it('does no work when the claim finds nothing to do', async () => {
    const processor = new ScriptedProcessor(queue, true, durableQueues);
    processor.claimable = false;
    await processor.process('b');
    expect(processor.calls).toEqual(['claim b']);
  });

  it('retries a claim and a finish that failed while the database was unreachable; the work runs once', async () => {
    const processor = new ScriptedProcessor(queue, true, durableQueues);
    processor.claimFailures = 1;
    processor.finishFailures = 2;
    await processor.process('c');
    expect(processor.calls).toEqual([
      'claim c',
      'claim c',
      'work claimed c',
      'finish claimed c with outcome of claimed c',
      'finish claimed c with outcome of claimed c',
      'finish claimed c with outcome of claimed c',
    ]);
  });

  it('does not retry an error that is not an outage', async () => {
    const processor = new ScriptedProcessor(queue, true, durableQueues);
    jest.spyOn(processor as unknown as { claim: () => Promise<string> }, 'claim').mockRejectedValueOnce(new TypeError('a bug'));
    await expect(processor.process('d')).rejects.toThrow('a bug');
  });

  it('at shutdown stops retrying, pauses the queue and waits for the work in flight', async () => {
    const processor = new ScriptedProcessor(queue, true, durableQueues);
    processor.holdWork = true;
    const running = processor.process('e');
    while (!processor.release) await new Promise((resolve) => setImmediate(resolve));
    expect(processor.holds('e')).toBe(true);
    let stopped = false;
    const stopping = processor.onModuleDestroy().then(() => (stopped = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(queue.paused).toBe(1);
    expect(stopped).toBe(false);
    processor.release();
    await running;
    await stopping;
    expect(processor.holds('e')).toBe(false);
    // A claim that meets an outage now is not retried: the row stays for the reconciler.
    processor.claimFailures = 1;
    await expect(processor.process('f')).rejects.toBeInstanceOf(StateWriteAborted);
  });

  it('abandons a piece whose queue job stalled too often, and only that', async () => {
    const processor = new ScriptedProcessor(queue, true, durableQueues);
    processor.onApplicationBootstrap();
    queue.emit('failed', { name: 'piece', data: { id: 'g' } }, new Error('something else'));
    queue.emit('failed', { name: 'tidy', data: {} }, new Error(STALLED_TOO_OFTEN));
    queue.emit('failed', { name: 'piece', data: { id: 'h' } }, new Error(STALLED_TOO_OFTEN));
    while (!processor.calls.includes('abandon h')) await new Promise((resolve) => setImmediate(resolve));
    expect(processor.calls).toEqual(['abandon h']);
  });
});
