import { ApiProperty } from '@nestjs/swagger';
import { PersonDto, toPersonDto } from '../../persons/dto/person.dto.js';
import { durations } from '../recording-metadata.js';
import { SNAPSHOT_SOURCES } from '../session-recording.entity.js';
import type { RecordingRow } from '../session-recordings.repository.js';

/** A recording is ongoing while its last events arrived less than this long ago. */
export const ONGOING_MS = 5 * 60 * 1000;

/** A session recording (interface §2.10). */
export class SessionRecordingDto {
  @ApiProperty({ example: '0192d6c4-8f8a-7c1e-9d57-2a9d3c1e4b5f', description: 'The session id.' })
  id: string;

  @ApiProperty({ example: 'user-1', description: 'The distinct id of the first request of the session.' })
  distinct_id: string;

  @ApiProperty({ description: "Whether the caller's user marked the recording as viewed (PATCH `viewed`)." })
  viewed: boolean;

  @ApiProperty({ example: 312.5, description: 'end_time − start_time, in seconds (millisecond precision).' })
  recording_duration: number;

  @ApiProperty({
    example: 87.25,
    description:
      'Seconds of activity: per capture request, segments of user activity (mouse, scroll, input, …) no more than ' +
      '5 s apart, each at least 1 ms, summed over all requests.',
  })
  active_seconds: number;

  @ApiProperty({ example: 225.25, description: 'recording_duration − active_seconds, never below 0.' })
  inactive_seconds: number;

  @ApiProperty({ type: String, format: 'date-time', description: 'Earliest event of the session.' })
  start_time: string;

  @ApiProperty({ type: String, format: 'date-time', description: 'Latest event of the session.' })
  end_time: string;

  @ApiProperty({ example: 12, description: 'Clicks, double clicks, touch ends and context menus.' })
  click_count: number;

  @ApiProperty({ example: 40, description: 'Input events.' })
  keypress_count: number;

  @ApiProperty({ example: 300, description: 'Mouse moves, mouse interactions and touch moves.' })
  mouse_activity_count: number;

  @ApiProperty({ example: 3, description: 'Console messages other than warnings and errors.' })
  console_log_count: number;

  @ApiProperty({ example: 1, description: 'console.warn and console.countReset.' })
  console_warn_count: number;

  @ApiProperty({ example: 0, description: 'console.error and console.assert.' })
  console_error_count: number;

  @ApiProperty({
    type: String,
    nullable: true,
    example: 'https://example.com/pricing',
    description: 'The URL of the earliest event carrying one (page load); null when none did.',
  })
  start_url: string | null;

  @ApiProperty({
    type: PersonDto,
    nullable: true,
    description:
      'The person of the recording. Writable through PATCH: `{"properties": {...}}` is shallow-merged.',
  })
  person: PersonDto | null;

  @ApiProperty({ example: 'postgres', enum: ['postgres'], description: 'Where the snapshots are kept.' })
  storage: string;

  @ApiProperty({ enum: SNAPSHOT_SOURCES, example: 'web' })
  snapshot_source: string;

  @ApiProperty({ description: 'Whether new events arrived less than 5 minutes ago.' })
  ongoing: boolean;
}

export function toRecordingDto(row: RecordingRow, nowMs: number): SessionRecordingDto {
  return {
    id: row.session_id,
    distinct_id: row.distinct_id,
    viewed: row.viewed,
    ...durations(row.start_ms, row.end_ms, row.active_ms),
    start_time: new Date(row.start_ms).toISOString(),
    end_time: new Date(row.end_ms).toISOString(),
    click_count: row.click_count,
    keypress_count: row.keypress_count,
    mouse_activity_count: row.mouse_activity_count,
    console_log_count: row.console_log_count,
    console_warn_count: row.console_warn_count,
    console_error_count: row.console_error_count,
    start_url: row.start_url,
    person: toPersonDto(row),
    storage: 'postgres',
    snapshot_source: row.snapshot_source,
    ongoing: nowMs - row.last_event_ms < ONGOING_MS,
  };
}

export class SnapshotDto {
  @ApiProperty({ example: '0192d6c4-8f8a-7c1e-9d57-000000000002', description: 'The browser window (tab).' })
  window_id: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: {
      type: 4,
      timestamp: 1763719200000,
      data: { href: 'https://example.com/', width: 1280, height: 800 },
    },
    description: 'The rrweb event as captured.',
  })
  event: Record<string, unknown>;
}

export class SnapshotsDto {
  @ApiProperty({
    type: [SnapshotDto],
    description: 'Every stored rrweb event of the recording, all windows, in time order.',
  })
  snapshots: SnapshotDto[];
}
