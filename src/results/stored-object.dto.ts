import { ApiProperty } from '@nestjs/swagger';

/** The job's `storage`: where its result was delivered (CONTRACT.md, "Storage destinations"). */
export class StoredObjectDto {
  @ApiProperty({
    type: 'string',
    nullable: true,
    description: 'The storage destination (`dst_…`); null for `upload`',
    example: 'dst_4fQx9LmZ2pRt7YvB1nKc3sDw',
  })
  destinationId: string | null;

  @ApiProperty({ type: 'string', nullable: true, description: 'Null for `upload`', example: 'my-screenshots' })
  bucket: string | null;

  @ApiProperty({
    type: 'string',
    nullable: true,
    description: "The image's object key, the destination's prefix included; null for `upload`",
    example: 'glimpse/2026-11-20/scr_8cV1nQw3ZrT5yU7iO9pA2sD4.png',
  })
  key: string | null;

  @ApiProperty({
    type: 'string',
    nullable: true,
    description: 'The ETag the bucket (or the upload URL) answered, as sent',
    example: '"9b2cf535f27731c974343645a3985328"',
  })
  etag: string | null;
}
