import { Injectable } from '@nestjs/common';
import type { Page } from 'playwright';
import { firstLine, Navigation } from '../browser/page-toolkit';
import { CaptureError } from '../capture/capture-engine';
import type { CaptureOptions } from '../capture/capture-options';
import { StoredExtracted, StoredExtractedFile } from '../results/extracted';
import { ResultFilesService } from '../storage/result-files.service';
import type { PageContent } from './extracted-limits';
import { extractInPage } from './in-page-extractor';

/** The page's content as extracted, with the main document's status and final URL, not stored yet. */
export interface ExtractedContent extends PageContent {
  statusCode: number | null;
  finalUrl: string | null;
}

/**
 * The content extraction of captures (docs/CONTRACT.md, "Extracted content"): {@link extract} reads the
 * loaded page (the capture engine's `beforeImage` step, after the waits and scripts), {@link store}
 * writes what was read as result files (capability URLs, expiry and headers of every result file;
 * local disk or S3 through the storage interface).
 */
@Injectable()
export class ExtractionService {
  constructor(private readonly files: ResultFilesService) {}

  /**
   * Extracts `options.extract` from `page` (see {@link extractInPage}); `navigation` gives the main
   * document's status. Throws {@link CaptureError} "extraction failed: …" when the page's script fails.
   */
  async extract(page: Page, navigation: Navigation, options: Pick<CaptureOptions, 'extract' | 'markdownMode'>): Promise<ExtractedContent> {
    const kinds = options.extract ?? [];
    let content: PageContent;
    try {
      content = await extractInPage(page, kinds, options.markdownMode);
    } catch (err) {
      throw new CaptureError(`extraction failed: ${firstLine((err as Error).message).slice(0, 200)}`);
    }
    return { ...content, statusCode: navigation.response?.status() ?? null, finalUrl: page.url() || null };
  }

  /**
   * Stores the extracted texts as result files (`.md` `text/markdown`, `.html` `text/html`, `.txt`
   * `text/plain`, links as `.json` `application/json`, all UTF-8) and returns the job's `extracted` artifact
   * (the job row's `artifacts.extracted`: file names, sizes in bytes, `truncated`; metadata inline). Rejects when storage fails.
   */
  async store(content: ExtractedContent): Promise<StoredExtracted> {
    const stored: StoredExtracted = {};
    const save = async (text: string, ext: 'md' | 'html' | 'txt', truncated: boolean): Promise<StoredExtractedFile> => {
      const data = Buffer.from(text, 'utf8');
      return { file: await this.files.save(data, ext), bytes: data.length, truncated };
    };
    if (content.markdown) stored.markdown = await save(content.markdown.content, 'md', content.markdown.truncated);
    if (content.html) stored.html = await save(content.html.content, 'html', content.html.truncated);
    if (content.text) stored.text = await save(content.text.content, 'txt', content.text.truncated);
    if (content.links) {
      stored.links = {
        file: await this.files.save(Buffer.from(JSON.stringify(content.links), 'utf8'), 'json'),
        count: content.links.length,
      };
    }
    if (content.metadata) stored.metadata = { ...content.metadata, statusCode: content.statusCode, finalUrl: content.finalUrl };
    return stored;
  }
}
