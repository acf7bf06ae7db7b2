import { Logger } from '@nestjs/common';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { newId } from '../../src/common/ids';
import { AppConfig } from '../../src/config/app-config';
import { dataSourceOptions } from '../../src/database/data-source';
import { EventRecord } from '../../src/events/event.entity';
import { EventsService } from '../../src/events/events.service';
import { DurableQueueService, DurableWorkDefinition } from '../../src/queue/durable-queue.service';
import { retryStateWrite } from '../../src/queue/state-writes';
import { WorkEndWaiter } from '../../src/queue/work-ended';
import { RunEnding, RunLifecycle } from '../../src/runs/run-lifecycle';
import { RunWork, SENSITIVE_RUN_GRACE_MS } from '../../src/runs/run-work';
import { CANCEL_SAFETY_POLL_MS } from '../../src/runs/run.processor';
import { Run } from '../../src/runs/run.entity';
import { LocalDiskStorage } from '../../src/storage/local-disk-storage';
import { ResultFilesService } from '../../src/storage/result-files.service';
import { FakeClock } from '../support/fake-clock';
import { startTcpProxy, TcpProxy } from '../support/tcp-proxy';
import { insertAccount, insertApiKey } from '../support/account-rows';

/**
 * RunLifecycle on a real PostgreSQL (the e2e run's database), without an HTTP app: guarded
 * transitions, the run.* event in the same transaction as the state, and retryStateWrite across an
 * outage of the database connection.
 */
describe('RunLifecycle (service, real PostgreSQL)', () => {
  const databaseUrl = process.env.GLIMPSE_TEST_DATABASE_URL as string;
  const clock = new FakeClock('2026-03-01T12:00:00.000Z');
  const storageDir = mkdtempSync(join(tmpdir(), 'glimpse-run-lifecycle-'));
  const config = { publicBaseUrl: 'http://127.0.0.1:3000', storageDir } as AppConfig;
  let db: DataSource;
  let lifecycle: RunLifecycle;
  let accountId: string;
  let apiKeyId: string;
  /** When set, the event sink throws inside the ending transaction (as a failing webhook fan-out would). */
  let sinkFailure: Error | null = null;

  function lifecycleOn(dataSource: DataSource): RunLifecycle {
    const eventsOn = new EventsService(dataSource, clock);
    eventsOn.registerSink({
      fanOut: async () => {
        if (sinkFailure) throw sinkFailure;
      },
    });
    return new RunLifecycle(
      dataSource.getRepository(Run),
      new ResultFilesService(new LocalDiskStorage(config), clock, config),
      eventsOn,
      clock,
    );
  }

  beforeAll(async () => {
    db = await new DataSource(dataSourceOptions({ databaseUrl })).initialize();
    accountId = await insertAccount(db, clock.now());
    apiKeyId = await insertApiKey(db, accountId, clock.now());
    lifecycle = lifecycleOn(db);
  });

  afterAll(async () => {
    await db?.destroy();
    rmSync(storageDir, { recursive: true, force: true });
  });

  afterEach(() => {
    sinkFailure = null;
  });

  /** Stores a run in `status` (as accepted, or as a worker left it) with `steps` waits (or sensitive fills). */
  async function storedRun(status: Run['status'] = 'pending', steps = 2, sensitive = false): Promise<Run> {
    const run = db.getRepository(Run).create({
      id: newId('run'),
      accountId,
      apiKeyId,
      status,
      url: 'http://127.0.0.1:9/start',
      options: { width: 1280, height: 720 } as Run['options'],
      video: false,
      timeoutMs: 10_000,
      steps: Array.from({ length: steps }, () =>
        sensitive
          ? ({ action: 'fill', selector: '#pw', sensitive: true } as Run['steps'][number])
          : ({ action: 'wait', ms: 1 } as Run['steps'][number]),
      ),
      attempts: status === 'pending' ? 0 : 1,
      createdAt: clock.now(),
      startedAt: status === 'pending' ? null : clock.now(),
      // Everything a worker writes later keeps its column default (empty lists, zero counts, null).
    });
    await db.getRepository(Run).insert(run);
    return run;
  }

  const completed: RunEnding = { status: 'completed', finalUrl: 'http://127.0.0.1:9/done', pageTitle: 'Done', stepResults: [] };
  const failedStep: RunEnding = { status: 'failed', finalizationError: 'step 0 (wait): boom', failure: { stage: 'step', stepIndex: 0 } };

  async function eventsOf(runId: string): Promise<EventRecord[]> {
    return db.getRepository(EventRecord).createQueryBuilder('e').where(`e.data->>'runId' = :runId`, { runId }).getMany();
  }

  async function reread(runId: string): Promise<Run> {
    return db.getRepository(Run).findOneByOrFail({ id: runId });
  }

  it('claims a pending run once: running, attempt counted; a second claim of the running run ends it failed at stage worker', async () => {
    const run = await storedRun('pending');
    const claimed = await lifecycle.claim(run.id);
    expect(claimed).toMatchObject({ id: run.id, status: 'running', attempts: 1 });
    expect(claimed?.startedAt).toEqual(clock.now());
    // The queue redelivers it (its worker died): it is not run again.
    expect(await lifecycle.claim(run.id)).toBeNull();
    const after = await reread(run.id);
    expect(after).toMatchObject({
      status: 'failed',
      finalizationError: 'the worker stopped during the run',
      failure: { stage: 'worker', stepIndex: 0 },
    });
    expect(after.stepResults.map((s) => s.status)).toEqual(['skipped', 'skipped']);
    expect((await eventsOf(run.id)).map((e) => e.type)).toEqual(['run.failed']);
  });

  it('ends a running run once with its run.completed event; a second end (completed or failed) changes nothing', async () => {
    const run = await storedRun('running');
    clock.advance(1_500);
    const ended = await lifecycle.finish(run.id, completed, ['running']);
    expect(ended).toMatchObject({ id: run.id, status: 'completed', finalUrl: 'http://127.0.0.1:9/done', completedAt: clock.now() });
    expect(await lifecycle.finish(run.id, failedStep, ['running'])).toBeNull();
    expect(await lifecycle.finish(run.id, completed)).toBeNull();
    expect(await reread(run.id)).toMatchObject({ status: 'completed', finalizationError: null });
    const stored = await eventsOf(run.id);
    expect(stored.map((e) => e.type)).toEqual(['run.completed']);
    expect(stored[0].data).toMatchObject({
      runId: run.id,
      status: 'completed',
      finalUrl: 'http://127.0.0.1:9/done',
      pageTitle: 'Done',
      stepCount: 2,
      durationMs: 1_500,
    });
  });

  it('never goes back: an ended run is not claimed, not ended again and takes no cancel request', async () => {
    const run = await storedRun('running');
    await lifecycle.finish(run.id, failedStep);
    expect(await lifecycle.claim(run.id)).toBeNull();
    expect(await lifecycle.failStranded(run.id)).toBeNull();
    const cancel = await lifecycle.cancel(await reread(run.id));
    expect(cancel.outcome).toBe('already-ended');
    expect(cancel.run).toMatchObject({ status: 'failed', failure: { stage: 'step', stepIndex: 0 }, cancelRequestedAt: null });
    expect((await eventsOf(run.id)).map((e) => e.type)).toEqual(['run.failed']);
  });

  it('cancels a pending run at once (failed, stage canceled, steps skipped), and asks a running one to stop', async () => {
    const pending = await storedRun('pending');
    const ended = await lifecycle.cancel(pending);
    expect(ended.outcome).toBe('ended');
    expect(ended.run).toMatchObject({
      status: 'failed',
      finalizationError: 'the run was canceled',
      failure: { stage: 'canceled', stepIndex: null },
    });
    expect(ended.run.stepResults.map((s) => s.status)).toEqual(['skipped', 'skipped']);
    expect((await eventsOf(pending.id)).map((e) => e.type)).toEqual(['run.failed']);
    // The pending run read by the caller was claimed meanwhile: the cancel becomes a request.
    const raced = await storedRun('pending');
    await lifecycle.claim(raced.id);
    const requested = await lifecycle.cancel(raced);
    expect(requested.outcome).toBe('requested');
    expect(requested.run).toMatchObject({ status: 'running', cancelRequestedAt: clock.now() });
    expect(await lifecycle.cancelRequested(raced.id)).toBe(true);
    expect(await eventsOf(raced.id)).toEqual([]);
  });

  it("announces a running run's cancel to the worker running it on LISTEN/NOTIFY, for that run only, without a poll", async () => {
    const waiter = new WorkEndWaiter({ databaseUrl, dependencyTimeoutMs: 5_000 } as AppConfig);
    try {
      const run = await storedRun('running');
      const other = await storedRun('running');
      const signals: boolean[] = [];
      const otherSignals: boolean[] = [];
      let heard!: () => void;
      const heardCancel = new Promise<void>((resolve) => (heard = resolve));
      const watch = waiter.watchCancel(run.id, (cancel) => {
        signals.push(cancel);
        if (cancel) heard();
      });
      const otherWatch = waiter.watchCancel(other.id, (cancel) => otherSignals.push(cancel));
      // The listening connection opens (bounded: a few hundred turns, else the test fails).
      for (let step = 0; step < 500 && !watch.listening(); step++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(watch.listening()).toBe(true);
      const reads = jest.spyOn(lifecycle, 'cancelRequested');
      expect((await lifecycle.cancel(await reread(run.id))).outcome).toBe('requested');
      let bound: NodeJS.Timeout | undefined;
      await Promise.race([
        heardCancel,
        new Promise((_, reject) => (bound = setTimeout(() => reject(new Error('the cancel was not announced')), 10_000))),
      ]);
      clearTimeout(bound);
      // Heard as a cancel (not as "read the row again"), and only by the watcher of that run.
      expect(signals.filter((cancel) => cancel)).toEqual([true]);
      expect(otherSignals.filter((cancel) => cancel)).toEqual([]);
      expect(reads).not.toHaveBeenCalled();
      reads.mockRestore();
      watch.stop();
      otherWatch.stop();
      // The worker reads the row on a timer only while that connection is down, and then seldom.
      expect(CANCEL_SAFETY_POLL_MS).toBeGreaterThanOrEqual(5_000);
    } finally {
      await waiter.onModuleDestroy();
    }
  });

  it('writes the end and its event in one transaction: when the event cannot be stored, the run stays running', async () => {
    const run = await storedRun('running');
    sinkFailure = new Error('fan-out failed');
    await expect(lifecycle.finish(run.id, completed)).rejects.toThrow('fan-out failed');
    expect(await reread(run.id)).toMatchObject({ status: 'running', completedAt: null, finalUrl: null });
    expect(await eventsOf(run.id)).toEqual([]);
    sinkFailure = null;
    expect(await lifecycle.finish(run.id, completed)).toMatchObject({ status: 'completed' });
    expect((await eventsOf(run.id)).map((e) => e.type)).toEqual(['run.completed']);
  });

  it('offers the reconciler pending runs only, and a run with sensitive values only after its grace', async () => {
    // The reconciler's view of runs (RunWork's pendingIds), read as DurableQueueService reads it.
    let definition: DurableWorkDefinition | undefined;
    const queues = { register: (d: DurableWorkDefinition) => (definition = d) } as unknown as DurableQueueService;
    new RunWork({} as never, queues, clock);
    const pendingIds = async () => (await definition!.pendingIds(db.manager, null, 1_000)) as string[];
    const plain = await storedRun('pending');
    const sensitive = await storedRun('pending', 1, true);
    const running = await storedRun('running');
    expect(await pendingIds()).toContain(plain.id);
    expect(await pendingIds()).not.toContain(sensitive.id);
    expect(await pendingIds()).not.toContain(running.id);
    clock.advance(SENSITIVE_RUN_GRACE_MS + 1);
    expect(await pendingIds()).toEqual(expect.arrayContaining([plain.id, sensitive.id]));
    await lifecycle.cancel(plain);
    expect(await pendingIds()).not.toContain(plain.id);
  });

  describe('with the database connection cut', () => {
    let proxy: TcpProxy;
    let proxied: DataSource;

    beforeAll(async () => {
      const url = new URL(databaseUrl);
      proxy = await startTcpProxy(Number(url.port || 5432), url.hostname);
      url.host = `127.0.0.1:${proxy.port}`;
      proxied = await new DataSource(dataSourceOptions({ databaseUrl: url.toString(), dependencyTimeoutMs: 1_000 })).initialize();
    });

    afterAll(async () => {
      await proxy?.restore();
      await proxied?.destroy();
      await proxy?.close();
    });

    it('retryStateWrite retries a finish that failed while PostgreSQL was unreachable, and it is written once', async () => {
      const run = await storedRun('running');
      const onProxy = lifecycleOn(proxied);
      const warnings: string[] = [];
      const logger = new (class extends Logger {
        override warn(message: unknown): void {
          warnings.push(String(message));
        }
      })('run-lifecycle-test');
      await proxy.cut();
      const writing = retryStateWrite(`finish ${run.id}`, () => onProxy.finish(run.id, completed, ['running']), logger);
      // Poll (no fixed sleep) until a try has failed as "database unreachable".
      const deadline = Date.now() + 30_000;
      while (!warnings.some((w) => w.includes('database unreachable')) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
      expect(warnings.some((w) => w.includes(`finish ${run.id}: database unreachable`))).toBe(true);
      expect(await reread(run.id)).toMatchObject({ status: 'running' });
      await proxy.restore();
      expect(await writing).toMatchObject({ id: run.id, status: 'completed' });
      expect(await reread(run.id)).toMatchObject({ status: 'completed' });
      expect((await eventsOf(run.id)).map((e) => e.type)).toEqual(['run.completed']);
    });
  });
});
