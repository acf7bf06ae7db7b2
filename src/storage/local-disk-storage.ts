import { Inject, Injectable } from '@nestjs/common';
import { mkdir, readdir, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { RESULT_FILE_NAME, ResultStorage, StoredFile } from './result-storage';

/** {@link ResultStorage} in a local directory (`STORAGE_DIR`); a file's mtime is its storage time. */
@Injectable()
export class LocalDiskStorage extends ResultStorage {
  private ready: Promise<unknown> | null = null;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    super();
  }

  async put(name: string, data: Buffer): Promise<void> {
    await (this.ready ??= mkdir(this.config.storageDir, { recursive: true }));
    const path = this.pathOf(name);
    const partial = `${path}.partial`;
    await writeFile(partial, data);
    await rename(partial, path);
  }

  async get(name: string): Promise<StoredFile | null> {
    const path = this.pathOf(name);
    try {
      const [data, info] = await Promise.all([readFile(path), stat(path)]);
      return { data, storedAt: info.mtime };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  async delete(name: string): Promise<void> {
    await unlink(this.pathOf(name)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
  }

  async deleteOlderThan(cutoff: Date): Promise<number> {
    let names: string[];
    try {
      names = await readdir(this.config.storageDir);
    } catch {
      return 0;
    }
    let deleted = 0;
    for (const name of names.filter((n) => RESULT_FILE_NAME.test(n))) {
      const info = await stat(join(this.config.storageDir, name)).catch(() => null);
      if (info && info.mtime < cutoff) {
        await this.delete(name);
        deleted++;
      }
    }
    return deleted;
  }

  private pathOf(name: string): string {
    if (!RESULT_FILE_NAME.test(name)) throw new Error(`Invalid result file name ${name}`);
    return join(this.config.storageDir, name);
  }
}
