import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { Clock } from '../common/clock';
import { RESULT_CONTENT_TYPES, ResultFormat } from '../capture/image-format';
import { newResultFileName, RESULT_FILE_NAME, ResultStorage } from './result-storage';

const DAY_MS = 24 * 60 * 60 * 1000;

/** A result file ready to be served. */
export interface ServedFile {
  data: Buffer;
  contentType: string;
}

/**
 * Result files and their capability URLs `{PUBLIC_BASE_URL}/files/<token>.<ext>` (CONTRACT.md,
 * "Screenshot jobs"): served without an API key for `RESULT_TTL_DAYS`, then 404 and deleted.
 */
@Injectable()
export class ResultFilesService {
  constructor(
    private readonly storage: ResultStorage,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Stores an image under a fresh unguessable name; returns that name. */
  async save(image: Buffer, format: ResultFormat): Promise<string> {
    const name = newResultFileName(format);
    await this.storage.put(name, image);
    return name;
  }

  /** The public URL of a stored file name. */
  publicUrl(name: string): string {
    return `${this.config.publicBaseUrl}/files/${name}`;
  }

  /** The file to serve for a request path name, or null (unknown, malformed or expired: expired files are deleted). */
  async open(name: string): Promise<ServedFile | null> {
    if (!RESULT_FILE_NAME.test(name)) return null;
    const file = await this.storage.get(name);
    if (!file) return null;
    if (file.storedAt.getTime() < this.expiryCutoff().getTime()) {
      await this.storage.delete(name);
      return null;
    }
    const ext = name.slice(name.lastIndexOf('.') + 1) as ResultFormat;
    return { data: file.data, contentType: RESULT_CONTENT_TYPES[ext] };
  }

  /**
   * Stores a copy of a result file under a fresh unguessable name (a cache hit's own result URL,
   * CONTRACT.md "Capture options": cache); returns that name, or null when the file is gone or expired.
   */
  async copy(name: string): Promise<string | null> {
    const file = await this.open(name);
    if (!file) return null;
    const copy = newResultFileName(name.slice(name.lastIndexOf('.') + 1));
    await this.storage.put(copy, file.data);
    return copy;
  }

  /** Deletes every file older than the TTL; returns how many. */
  purgeExpired(): Promise<number> {
    return this.storage.deleteOlderThan(this.expiryCutoff());
  }

  private expiryCutoff(): Date {
    return new Date(this.clock.now().getTime() - this.config.resultTtlDays * DAY_MS);
  }
}
