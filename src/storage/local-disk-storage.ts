import { Inject, Injectable } from '@nestjs/common';
import { createReadStream, createWriteStream } from 'node:fs';
import { copyFile, mkdir, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { ByteRange, RESULT_FILE_NAME, ResultStorage, StoredFileInfo } from './result-storage';

/**
 * {@link ResultStorage} in a local directory (`STORAGE_DIR`, shared by the API and workers through a
 * volume when they run apart); a file's mtime is its storage time. Writes go to `<name>.partial`
 * (same directory) first and are renamed, so a reader never sees half a file; a failed write removes
 * its partial file.
 */
@Injectable()
export class LocalDiskStorage extends ResultStorage {
  private ready: Promise<unknown> | null = null;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    super();
  }

  async put(name: string, data: Buffer): Promise<void> {
    await this.write(name, (partial) => writeFile(partial, data));
  }

  async putStream(name: string, body: Readable): Promise<void> {
    await this.write(name, (partial) => pipeline(body, createWriteStream(partial)));
  }

  /** A kernel-side copy (`copyFile`): the bytes never pass through this process's memory, whatever the file's size. */
  override async putFile(name: string, path: string): Promise<void> {
    await this.write(name, (partial) => copyFile(path, partial));
  }

  async copy(from: string, to: string): Promise<void> {
    await this.write(to, (partial) => copyFile(this.pathOf(from), partial));
  }

  async stat(name: string): Promise<StoredFileInfo | null> {
    try {
      const info = await stat(this.pathOf(name));
      return { size: info.size, storedAt: info.mtime, etag: `"${info.size.toString(16)}-${Math.floor(info.mtimeMs).toString(16)}"` };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  async createReadStream(name: string, range?: ByteRange): Promise<Readable> {
    const stream = createReadStream(this.pathOf(name), range ? { start: range.start, end: range.end } : {});
    // Surface a missing file as a rejection rather than a later stream error.
    await new Promise<void>((resolve, reject) => {
      stream.once('open', () => resolve());
      stream.once('error', reject);
    });
    return stream;
  }

  async delete(name: string): Promise<void> {
    await unlink(this.pathOf(name)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
  }

  /** Has `fill` write the file at `<name>.partial`, then renames it to `name`; removes the partial file when anything fails. */
  private async write(name: string, fill: (partial: string) => Promise<unknown>): Promise<void> {
    const path = this.pathOf(name);
    await (this.ready ??= mkdir(this.config.storageDir, { recursive: true }));
    const partial = `${path}.partial`;
    try {
      await fill(partial);
      await rename(partial, path);
    } catch (err) {
      await unlink(partial).catch(() => undefined);
      throw err;
    }
  }

  private pathOf(name: string): string {
    if (!RESULT_FILE_NAME.test(name)) throw new Error(`Invalid result file name ${name}`);
    return join(this.config.storageDir, name);
  }
}
