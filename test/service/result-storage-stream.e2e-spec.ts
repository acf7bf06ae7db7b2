import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import S3rver from 's3rver';
import { SystemClock } from '../../src/common/clock';
import { AppConfig, loadConfig } from '../../src/config/app-config';
import { LocalDiskStorage } from '../../src/storage/local-disk-storage';
import { ResultFilesService } from '../../src/storage/result-files.service';
import { newResultFileName, ResultStorage } from '../../src/storage/result-storage';
import { S3Storage } from '../../src/storage/s3-storage';

const BUCKET = 'glimpse-results';
const MiB = 1024 * 1024;

/** The whole stream read into one buffer (test data only). */
async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A body yielding `head`, then waiting for `gate` before yielding `tail` (or throwing `failure`); `reached` resolves once `head` was taken. */
function gatedBody(head: Buffer, tail: Buffer, failure?: Error) {
  let open!: () => void;
  let arrived!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  const reached = new Promise<void>((r) => (arrived = r));
  const body = Readable.from(
    (async function* () {
      for (let i = 0; i < head.length; i += MiB) yield head.subarray(i, i + MiB);
      arrived();
      await gate;
      if (failure) throw failure;
      yield tail;
    })(),
  );
  return { body, reached, open };
}

/**
 * `ResultStorage.putStream` and `ResultFilesService.saveFile` (a run's video stored without reading it
 * into memory, docs/runs.md#cost) on both drivers: the local directory and an S3-compatible bucket
 * (s3rver, a real S3 HTTP server, on loopback), with bodies larger than one multipart part (5 MiB).
 */
describe.each(['local', 's3'] as const)('streamed result files on %s storage', (driver) => {
  const dir = mkdtempSync(join(tmpdir(), 'glimpse-stream-'));
  const storageDir = join(dir, 'results');
  let s3server: S3rver | null = null;
  let storage: ResultStorage;
  let files: ResultFilesService;

  beforeAll(async () => {
    let config: AppConfig;
    if (driver === 's3') {
      s3server = new S3rver({
        address: '127.0.0.1',
        port: 0,
        silent: true,
        directory: join(dir, 's3'),
        configureBuckets: [{ name: BUCKET }],
      });
      const { port } = await s3server.run();
      config = loadConfig({
        STORAGE_DRIVER: 's3',
        S3_BUCKET: BUCKET,
        S3_ENDPOINT: `http://127.0.0.1:${port}`,
        S3_REGION: 'us-east-1',
        S3_ACCESS_KEY_ID: 'S3RVER',
        S3_SECRET_ACCESS_KEY: 'S3RVER',
        S3_FORCE_PATH_STYLE: 'true',
      });
      storage = new S3Storage(config);
    } else {
      config = loadConfig({ STORAGE_DIR: storageDir });
      storage = new LocalDiskStorage(config);
    }
    files = new ResultFilesService(storage, new SystemClock(), config);
  });
  afterAll(async () => {
    if (storage instanceof S3Storage) storage.onModuleDestroy();
    await s3server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Files in the local storage directory other than finished results (`*.partial`). */
  const partials = () => (existsSync(storageDir) ? readdirSync(storageDir).filter((f) => f.endsWith('.partial')) : []);

  it('saveFile stores a file larger than one part with the same bytes, type and size', async () => {
    const source = join(dir, 'video.webm');
    const data = randomBytes(11 * MiB + 123);
    writeFileSync(source, data);
    const name = await files.saveFile(source, 'webm');
    expect(name).toMatch(/^[A-Za-z0-9_-]{43}\.webm$/);
    const file = await files.describe(name);
    expect(file).toMatchObject({ size: data.length, contentType: 'video/webm' });
    expect((await readAll(await storage.createReadStream(name))).equals(data)).toBe(true);
    expect(existsSync(source)).toBe(true); // the caller's file, removed by the caller
    expect(partials()).toEqual([]);
  });

  it('shows nothing under the name until the stream ended, then the whole file', async () => {
    const name = newResultFileName('webm');
    const head = randomBytes(6 * MiB);
    const tail = randomBytes(1000);
    const { body, reached, open } = gatedBody(head, tail);
    const put = storage.putStream(name, body, 'video/webm');
    await reached;
    expect(await storage.stat(name)).toBeNull();
    if (driver === 'local') expect(partials()).toEqual([`${name}.partial`]);
    open();
    await put;
    expect((await readAll(await storage.createReadStream(name))).equals(Buffer.concat([head, tail]))).toBe(true);
    expect(partials()).toEqual([]);
  });

  it('rejects when the stream fails midway and leaves neither the file nor a partial one', async () => {
    const name = newResultFileName('webm');
    const { body, reached, open } = gatedBody(randomBytes(6 * MiB), Buffer.alloc(0), new Error('encoder died'));
    const put = storage.putStream(name, body, 'video/webm');
    await reached;
    open();
    await expect(put).rejects.toThrow();
    expect(await storage.stat(name)).toBeNull();
    expect(partials()).toEqual([]);
  });

  it('saveFile rejects for a missing file and stores nothing', async () => {
    await expect(files.saveFile(join(dir, 'missing.webm'), 'webm')).rejects.toThrow(/ENOENT/);
    expect(partials()).toEqual([]);
  });
});
