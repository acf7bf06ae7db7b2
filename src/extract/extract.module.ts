import { Module } from '@nestjs/common';
import { StorageModule } from '../storage/storage.module';
import { ExtractionService } from './extraction.service';

/** Content extraction of captures: markdown, html, text, links and metadata (docs/CONTRACT.md, "Extracted content"). */
@Module({ imports: [StorageModule], providers: [ExtractionService], exports: [ExtractionService] })
export class ExtractModule {}
