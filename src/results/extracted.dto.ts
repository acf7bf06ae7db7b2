import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { EXTRACT_CAPS, EXTRACT_LINKS_MAX, EXTRACT_METADATA_CAPS, ExtractedFile, ExtractedMetadata, ExtractedSummary } from './extracted';

const META = EXTRACT_METADATA_CAPS;

/*
 * The OpenAPI shapes of the job's `extracted` object (docs/CONTRACT.md, "Extracted content"), shared by
 * the job DTO and the `screenshot.completed` event DTO. Documentation only.
 */

/** An extracted text stored as a result file. */
export class ExtractedFileDto implements ExtractedFile {
  @ApiProperty({
    description: 'Result file (capability URL, no API key needed)',
    example: 'https://glimpse.example.com/files/Xq2vQd8Lr0tYb3nWc5mKz7hJf1pSg4aDe6uVi9oRl2x.md',
  })
  url: string;
  @ApiProperty({ type: 'integer', description: 'Size of the file in bytes (UTF-8)', example: 5120 })
  bytes: number;
  @ApiProperty({
    description: `True when the content was cut at its cap (html ${EXTRACT_CAPS.html} bytes, markdown and text ${EXTRACT_CAPS.markdown} bytes)`,
  })
  truncated: boolean;
}

/** The links file. */
export class ExtractedLinksDto {
  @ApiProperty({
    description: `JSON file of [{ url, text, rel }]: every a[href], absolute, de-duplicated by URL, at most ${EXTRACT_LINKS_MAX}`,
    example: 'https://glimpse.example.com/files/Xq2vQd8Lr0tYb3nWc5mKz7hJf1pSg4aDe6uVi9oRl2x.json',
  })
  url: string;
  @ApiProperty({ type: 'integer', description: 'Number of links', example: 42 })
  count: number;
}

/** The page's metadata (absent values null; URLs absolute; every string at most 2,048 characters). */
export class ExtractedMetadataDto implements ExtractedMetadata {
  @ApiProperty({ type: 'string', nullable: true, example: 'Example Domain' })
  title: string | null;
  @ApiProperty({ type: 'string', nullable: true, description: 'meta name=description (else og:description)' })
  description: string | null;
  @ApiProperty({ type: 'string', nullable: true, description: 'lang of the html element', example: 'en' })
  lang: string | null;
  @ApiProperty({ type: 'string', nullable: true, description: 'link rel=canonical, absolute' })
  canonicalUrl: string | null;
  @ApiProperty({ type: 'string', nullable: true, description: 'og:site_name' })
  siteName: string | null;
  @ApiProperty({ type: 'string', nullable: true, description: 'og:image (else twitter:image), absolute' })
  image: string | null;
  @ApiProperty({ type: 'string', nullable: true, description: 'link rel=icon, absolute' })
  favicon: string | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: `og:* properties, prefix dropped; with twitter at most ${META.entriesMax} entries (openGraph's first), names and values at most ${META.valueMaxChars} characters`,
    example: { title: 'Example' },
  })
  openGraph: Record<string, string>;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: `twitter:* properties, prefix dropped; with openGraph at most ${META.entriesMax} entries, names and values at most ${META.valueMaxChars} characters`,
    example: { card: 'summary' },
  })
  twitter: Record<string, string>;
  @ApiProperty({ type: 'integer', nullable: true, description: 'HTTP status of the main document', example: 200 })
  statusCode: number | null;
  @ApiProperty({ type: 'string', nullable: true, description: 'URL of the page after redirects' })
  finalUrl: string | null;
}

/** The job's `extracted` object: what `extract` asked for. */
export class ExtractedDto implements ExtractedSummary {
  @ApiPropertyOptional({ type: ExtractedFileDto, description: 'Markdown (text/markdown)' })
  markdown?: ExtractedFileDto;
  @ApiPropertyOptional({ type: ExtractedFileDto, description: 'The DOM after scripts with its doctype (text/html)' })
  html?: ExtractedFileDto;
  @ApiPropertyOptional({ type: ExtractedFileDto, description: "The body's innerText (text/plain)" })
  text?: ExtractedFileDto;
  @ApiPropertyOptional({ type: ExtractedLinksDto })
  links?: ExtractedLinksDto;
  @ApiPropertyOptional({ type: ExtractedMetadataDto })
  metadata?: ExtractedMetadataDto;
}
