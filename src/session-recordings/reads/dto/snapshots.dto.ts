import { ApiProperty } from '@nestjs/swagger';

/** The one kind of snapshot source this service stores (PostHog's name for its blob format, version 2). */
export const BLOB_V2 = 'blob_v2';

/** One stored chunk of a recording's snapshots, readable with `?source=blob_v2&blob_key=…`. */
export class SnapshotSourceDto {
  @ApiProperty({ enum: [BLOB_V2], example: BLOB_V2 })
  source: string;

  @ApiProperty({
    example: '0000000000000000042',
    description:
      'The key of the chunk: an opaque string of digits, of fixed width, so that ordering keys as strings orders them as listed for equal start timestamps.',
  })
  blob_key: string;

  @ApiProperty({ type: String, format: 'date-time', description: 'Earliest event of the chunk.' })
  start_timestamp: string;

  @ApiProperty({ type: String, format: 'date-time', description: 'Latest event of the chunk.' })
  end_timestamp: string;
}

export class SnapshotSourcesDto {
  @ApiProperty({
    type: [SnapshotSourceDto],
    description:
      'Every stored chunk of the recording, in time order (`start_timestamp`, then `blob_key`). Each holds the events of one window, in time order, bounded at ingest by RECORDING_CHUNK_MAX_EVENTS and RECORDING_CHUNK_MAX_BYTES.',
  })
  sources: SnapshotSourceDto[];
}

/** The query of the snapshots routes. */
export interface SnapshotsQuery {
  source?: unknown;
  blob_key?: unknown;
  start_blob_key?: unknown;
  end_blob_key?: unknown;
}
