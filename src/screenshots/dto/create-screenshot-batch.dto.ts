import { ApiProperty } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, ValidateNested } from 'class-validator';
import { CreateScreenshotDto } from './create-screenshot.dto';
import { ScreenshotJobDto } from './screenshot-job.dto';

/** Items of one batch (CONTRACT.md, "Batches"). */
export const BATCH_ITEMS = { min: 1, max: 100 } as const;

/** Body of `POST /v1/screenshot/batch`: 1–100 capture requests, each with the rules of `POST /v1/screenshot`. */
export class CreateScreenshotBatchDto {
  @ApiProperty({
    type: [CreateScreenshotDto],
    minItems: BATCH_ITEMS.min,
    maxItems: BATCH_ITEMS.max,
    description: `${BATCH_ITEMS.min}–${BATCH_ITEMS.max} capture requests, each a body of \`POST /v1/screenshot\`; one job per item, in this order`,
  })
  @IsArray()
  @ArrayMinSize(BATCH_ITEMS.min)
  @ArrayMaxSize(BATCH_ITEMS.max)
  @ValidateNested({ each: true })
  @Type(() => CreateScreenshotDto)
  items: CreateScreenshotDto[];
}

/** The 202 of `POST /v1/screenshot/batch`: the jobs, `pending`, in the order of `items`. */
export class ScreenshotBatchDto {
  @ApiProperty({ type: [ScreenshotJobDto], description: 'One job per item, in the order of items' })
  data: ScreenshotJobDto[];
}
