import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateNested,
} from 'class-validator';
import { CAPTURE_LIMITS } from '../../capture/capture-options';
import { IsHttpUrl } from '../../common/validation';
import { CaptureOptionsDto } from '../../screenshots/dto/create-screenshot.dto';
import { CRAWL_DISCOVER, CRAWL_SCOPES, CrawlDiscover, CrawlScope } from '../crawl-options';

/** Limits and defaults of a crawl's body (CONTRACT.md, "Crawls"); `maxPages` is further capped by the plan. */
export const CRAWL_LIMITS = {
  maxPages: { min: 1, max: 1_000, default: 100 },
  maxDepth: { min: 0, max: 5, default: 2 },
  globs: { min: 1, max: 50, maxLength: 2_048 },
} as const;

/** A list of globs of `include` / `exclude`. */
function Globs(description: string): PropertyDecorator {
  const { min, max, maxLength } = CRAWL_LIMITS.globs;
  const decorators = [
    ApiPropertyOptional({ type: [String], minItems: min, maxItems: max, description }),
    IsOptional(),
    IsArray(),
    ArrayMinSize(min),
    ArrayMaxSize(max),
    IsString({ each: true }),
    MinLength(1, { each: true }),
    MaxLength(maxLength, { each: true }),
  ];
  return (target, key) => decorators.forEach((d) => d(target, key));
}

/** Body of `POST /v1/crawls` (CONTRACT.md, "Crawls"). Unknown fields are rejected. */
export class CreateCrawlDto {
  @ApiProperty({
    description: "The start URL (same rules as a capture's `url`)",
    maxLength: CAPTURE_LIMITS.urlMaxLength,
    example: 'https://example.com/',
  })
  @IsHttpUrl(CAPTURE_LIMITS.urlMaxLength)
  url: string;

  @ApiPropertyOptional({
    enum: CRAWL_DISCOVER,
    default: 'both',
    description:
      "Where pages are found: the site's sitemaps (robots.txt `Sitemap:` lines and /sitemap.xml), the links of each captured page, or both",
  })
  @IsOptional()
  @IsIn(CRAWL_DISCOVER)
  discover?: CrawlDiscover;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: CRAWL_LIMITS.maxPages.min,
    maximum: CRAWL_LIMITS.maxPages.max,
    default: CRAWL_LIMITS.maxPages.default,
    description:
      "Most pages captured (one job each). The plan caps it: free 20, starter 200, pro 1,000; without it, 100 or the plan's cap if lower",
  })
  @IsOptional()
  @IsInt()
  @Min(CRAWL_LIMITS.maxPages.min)
  @Max(CRAWL_LIMITS.maxPages.max)
  maxPages?: number;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: CRAWL_LIMITS.maxDepth.min,
    maximum: CRAWL_LIMITS.maxDepth.max,
    default: CRAWL_LIMITS.maxDepth.default,
    description: "Links followed from the start URL (the start URL and the sitemaps' pages are depth 0)",
  })
  @IsOptional()
  @IsInt()
  @Min(CRAWL_LIMITS.maxDepth.min)
  @Max(CRAWL_LIMITS.maxDepth.max)
  maxDepth?: number;

  @Globs('Only pages whose path and query match one of these globs (`*` any characters) are kept; the start URL always is')
  include?: string[];

  @Globs('Pages whose path and query match one of these globs are left out')
  exclude?: string[];

  @ApiPropertyOptional({
    enum: CRAWL_SCOPES,
    default: 'host',
    description: "`host`: the start URL's host only; `domain`: that host without `www.` and every host below it",
  })
  @IsOptional()
  @IsIn(CRAWL_SCOPES)
  scope?: CrawlScope;

  @ApiPropertyOptional({ default: true, description: 'Follow robots.txt rules for user agent `Glimpse`' })
  @IsOptional()
  @IsBoolean()
  respectRobots?: boolean;

  @ApiPropertyOptional({
    type: CaptureOptionsDto,
    description: 'Capture options of every page (those of `POST /v1/screenshot` without `url`; `extract` included)',
  })
  @IsOptional()
  @ValidateNested()
  @Type(() => CaptureOptionsDto)
  capture?: CaptureOptionsDto;
}
