import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SystemClock } from '../common/clock';
import { loadConfig } from '../config/app-config';
import { LocalDiskStorage } from './local-disk-storage';
import { ResultFilesService } from './result-files.service';

describe('ResultFilesService.open (MCP inline images, bounded)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'glimpse-open-'));
  const config = loadConfig({ STORAGE_DIR: dir });
  const storage = new LocalDiskStorage(config);
  const files = new ResultFilesService(storage, new SystemClock(), config);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads a file of at most maxBytes whole, and never reads a larger one', async () => {
    const name = await files.save(Buffer.alloc(1000, 7), 'png');
    const fits = await files.open(name, 1000);
    expect(fits).toMatchObject({ size: 1000, contentType: 'image/png' });
    expect(fits?.data?.equals(Buffer.alloc(1000, 7))).toBe(true);

    const read = jest.spyOn(storage, 'createReadStream');
    expect(await files.open(name, 999)).toEqual({ size: 1000, contentType: 'image/png', data: null });
    expect(read).not.toHaveBeenCalled();
  });

  it('answers null for an unknown file', async () => {
    expect(await files.open('0123456789abcdef0123456789abcdef.png', 10)).toBeNull();
  });
});
