import { Injectable } from '@nestjs/common';
import { PassThrough, Readable } from 'node:stream';
import { ZipFile } from 'yazl';
import type { CrawlPageResult } from '../screenshots/screenshots.service';
import { ResultFilesService } from '../storage/result-files.service';

/** One page of a bundle's `manifest.json` (CONTRACT.md, "Crawls"). */
export interface ManifestEntry {
  url: string;
  depth: number;
  /** The page's job status (`done`, `failed`, …); `skipped` for a page the crawl found but never queued. */
  status: string;
  /** The result file's path in the ZIP; null without one (failed, `format: "none"`, expired). */
  file: string | null;
  /** Extracted files' paths in the ZIP by kind (`markdown`, `html`, `text`, `links`). */
  extracted: Record<string, string>;
}

/** A page to put in a bundle: where it is, and its job's results (null: never queued). */
export interface BundledPage {
  url: string;
  depth: number;
  result: CrawlPageResult | null;
}

const EXTRACTED_EXTENSIONS: Record<string, string> = { markdown: 'md', html: 'html', text: 'txt', links: 'links.json' };

/**
 * A crawl's bundle (CONTRACT.md, "Crawls"): one ZIP of every page's result files
 * (`pages/<n>.<ext>`, `pages/<n>.md`, … numbered in discovery order) and `manifest.json`, written with
 * `yazl` straight into storage ({@link ResultFilesService.saveStream}): each file is read from storage
 * only when the ZIP reaches it (`addReadStreamLazy`) and streamed through, so memory stays flat
 * whatever the number and size of the results. A result file gone since (expired) is left out
 * (`file` null). Returns the bundle's file name; rejects when storage fails (nothing stored then).
 */
@Injectable()
export class CrawlBundle {
  constructor(private readonly files: ResultFilesService) {}

  async store(pages: BundledPage[]): Promise<string> {
    const zip = new ZipFile();
    const manifest: ManifestEntry[] = [];
    for (const [i, page] of pages.entries()) {
      const base = `pages/${String(i + 1).padStart(4, '0')}`;
      const entry: ManifestEntry = {
        url: page.url,
        depth: page.depth,
        status: page.result?.status ?? 'skipped',
        file: null,
        extracted: {},
      };
      const result = page.result;
      if (result?.resultFile && (await this.add(zip, result.resultFile, `${base}${extensionOf(result.resultFile)}`))) {
        entry.file = `${base}${extensionOf(result.resultFile)}`;
      }
      for (const [kind, file] of Object.entries(result?.extractedFiles ?? {})) {
        const path = `${base}.${EXTRACTED_EXTENSIONS[kind] ?? kind}`;
        if (await this.add(zip, file, path)) entry.extracted[kind] = path;
      }
      manifest.push(entry);
    }
    zip.addBuffer(Buffer.from(JSON.stringify(manifest, null, 2), 'utf8'), 'manifest.json');
    zip.end();
    // yazl's output is an old-style stream; storage reads a Readable.
    const output = (zip.outputStream as Readable).pipe(new PassThrough());
    return this.files.saveStream(output, 'zip');
  }

  /** Adds the stored file `name` as `path`, read when the ZIP reaches it; false when it is gone. */
  private async add(zip: ZipFile, name: string, path: string): Promise<boolean> {
    const file = await this.files.describe(name);
    if (!file) return false;
    // Text compresses; images and PDFs hardly do, and are stored as they are.
    const compress = /\.(md|html|txt|json)$/.test(path);
    zip.addReadStreamLazy(path, { size: file.size, compress }, (callback) => {
      this.files.stream(file).then(
        (stream) => callback(null, stream),
        (err: Error) => callback(err, undefined as never),
      );
    });
    return true;
  }
}

/** `.png` of `abc.png`. */
function extensionOf(name: string): string {
  return name.slice(name.lastIndexOf('.'));
}
