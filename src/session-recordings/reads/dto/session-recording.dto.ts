import { ApiProperty } from '@nestjs/swagger';
import { PersonDto, toPersonDto } from '../../../persons/dto/person.dto.js';
import { personFromColumns } from '../../../persons/persons.sql.js';
import { activityScore, retention, wholeSeconds } from '../recording-figures.js';
import { SNAPSHOT_SOURCES } from '../../session-recording.entity.js';
import { MAX_VIEWERS, type RecordingView } from '../../session-recordings.repository.js';

/** A recording is ongoing while its last events arrived less than this long ago. */
export const ONGOING_MS = 5 * 60 * 1000;

/** A session recording (docs/interface.md §2.10). */
export class SessionRecordingDto {
  @ApiProperty({ example: '0192d6c4-8f8a-7c1e-9d57-2a9d3c1e4b5f', description: 'The session id.' })
  id: string;

  @ApiProperty({ example: 'user-1', description: 'The distinct id of the first request of the session.' })
  distinct_id: string;

  @ApiProperty({ description: "Whether the caller's user marked the recording as viewed (PATCH `viewed`)." })
  viewed: boolean;

  @ApiProperty({
    type: 'array',
    items: { type: 'string', format: 'email' },
    example: ['ada@example.com'],
    description: `E-mails of the other users who marked it viewed, first viewer first (at most ${MAX_VIEWERS}).`,
  })
  viewers: string[];

  @ApiProperty({
    type: 'integer',
    example: 312,
    description:
      'Whole seconds from start_time to end_time (the second boundaries between them, as PostHog counts).',
  })
  recording_duration: number;

  @ApiProperty({
    type: 'integer',
    example: 87,
    description:
      'Whole seconds of activity (truncated): per capture request, segments of user activity (mouse, scroll, ' +
      'input, …) no more than 5 s apart, each at least 1 ms, summed over all requests.',
  })
  active_seconds: number;

  @ApiProperty({
    type: 'integer',
    example: 224,
    description: 'recording_duration − the active time, truncated to whole seconds, never below 0.',
  })
  inactive_seconds: number;

  @ApiProperty({ type: String, format: 'date-time', description: 'Earliest event of the session.' })
  start_time: string;

  @ApiProperty({ type: String, format: 'date-time', description: 'Latest event of the session.' })
  end_time: string;

  @ApiProperty({
    type: 'integer',
    example: 12,
    description: 'Clicks, double clicks, touch ends and context menus.',
  })
  click_count: number;

  @ApiProperty({ type: 'integer', example: 40, description: 'Input events.' })
  keypress_count: number;

  @ApiProperty({
    type: 'integer',
    example: 300,
    description: 'Mouse moves, mouse interactions and touch moves.',
  })
  mouse_activity_count: number;

  @ApiProperty({
    type: 'integer',
    example: 3,
    description: 'Console messages other than warnings and errors.',
  })
  console_log_count: number;

  @ApiProperty({ type: 'integer', example: 1, description: 'console.warn and console.countReset.' })
  console_warn_count: number;

  @ApiProperty({ type: 'integer', example: 0, description: 'console.error and console.assert.' })
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
      'The person of the recording. Writable through PATCH: `{"properties": {...}}` is shallow-merged. Null ' +
      'without a person, and for a caller whose `query` access level (events and persons) is `none`.',
  })
  person: PersonDto | null;

  @ApiProperty({
    example: 'postgres',
    enum: ['postgres', 'object_storage'],
    description:
      'Where the service writes snapshots (RECORDING_STORAGE): `postgres`, or `object_storage` for an S3-compatible store (as PostHog names it). Chunks written before a change of backend are read from where they are.',
  })
  storage: RecordingStorageName;

  @ApiProperty({ enum: SNAPSHOT_SOURCES, example: 'web' })
  snapshot_source: string;

  @ApiProperty({ description: 'Whether new events arrived less than 5 minutes ago.' })
  ongoing: boolean;

  @ApiProperty({
    type: 'number',
    nullable: true,
    minimum: 0,
    maximum: 100,
    example: 18.97,
    description:
      "PostHog's activity score: (active seconds + clicks + key presses + console errors) / (mouse activity + " +
      'duration + console messages) in percent, clamped to 0–100, two decimals; null when there is nothing to ' +
      'divide by.',
  })
  activity_score: number | null;

  @ApiProperty({
    type: 'integer',
    example: 30,
    description:
      "Days the project's recordings are kept: its session_recording_retention_period_days, else " +
      'RECORDING_RETENTION_DAYS.',
  })
  retention_period_days: number;

  @ApiProperty({
    type: String,
    format: 'date-time',
    description:
      'The start of the (UTC) day the recording started, plus retention_period_days. From then on the ' +
      'recording is gone from the API (404, not listed) and the purge deletes it.',
  })
  expiry_time: string;

  @ApiProperty({
    type: 'integer',
    example: 29,
    description: 'Days from today (UTC) to expiry_time; negative once it has passed.',
  })
  recording_ttl: number;
}

export type RecordingStorageName = 'postgres' | 'object_storage';

export function toRecordingDto(
  r: RecordingView,
  nowMs: number,
  retentionDays: number,
  storage: RecordingStorageName,
): SessionRecordingDto {
  const seconds = wholeSeconds(r.startMs, r.endMs, r.activeMs);
  return {
    id: r.sessionId,
    distinct_id: r.distinctId,
    viewed: r.viewed,
    viewers: r.viewers,
    ...seconds,
    start_time: new Date(r.startMs).toISOString(),
    end_time: new Date(r.endMs).toISOString(),
    click_count: r.clickCount,
    keypress_count: r.keypressCount,
    mouse_activity_count: r.mouseActivityCount,
    console_log_count: r.consoleLogCount,
    console_warn_count: r.consoleWarnCount,
    console_error_count: r.consoleErrorCount,
    start_url: r.startUrl,
    person: toPersonDto(personFromColumns(r)),
    storage,
    snapshot_source: r.snapshotSource,
    ongoing: nowMs - r.lastEventMs < ONGOING_MS,
    activity_score: activityScore({
      activeMs: r.activeMs,
      durationSeconds: seconds.recording_duration,
      clickCount: r.clickCount,
      keypressCount: r.keypressCount,
      mouseActivityCount: r.mouseActivityCount,
      consoleLogCount: r.consoleLogCount,
      consoleWarnCount: r.consoleWarnCount,
      consoleErrorCount: r.consoleErrorCount,
    }),
    ...retention(r.startMs, nowMs, retentionDays),
  };
}
