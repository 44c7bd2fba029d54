import { OmitType } from '@nestjs/swagger';
import { SessionRecordingDto } from '../../reads/dto/session-recording.dto.js';

/**
 * A recording as the public share (`GET /api/shared/:access_token`) shows it: what the replay needs and nothing
 * about who was recorded. No `person` (its properties hold whatever the site `$set`: e-mail, name, …), no
 * `distinct_id` (often an e-mail or an account id), and no `viewed` or `viewers` (the project's members: a
 * per-user flag, and their e-mails).
 */
export class SharedSessionRecordingDto extends OmitType(SessionRecordingDto, [
  'distinct_id',
  'person',
  'viewed',
  'viewers',
] as const) {}

/** An allowlist, not a deletion: a field added to SessionRecordingDto stays private until listed here. */
export function toSharedRecordingDto(recording: SessionRecordingDto): SharedSessionRecordingDto {
  return {
    id: recording.id,
    recording_duration: recording.recording_duration,
    active_seconds: recording.active_seconds,
    inactive_seconds: recording.inactive_seconds,
    start_time: recording.start_time,
    end_time: recording.end_time,
    click_count: recording.click_count,
    keypress_count: recording.keypress_count,
    mouse_activity_count: recording.mouse_activity_count,
    console_log_count: recording.console_log_count,
    console_warn_count: recording.console_warn_count,
    console_error_count: recording.console_error_count,
    start_url: recording.start_url,
    storage: recording.storage,
    snapshot_source: recording.snapshot_source,
    ongoing: recording.ongoing,
    activity_score: recording.activity_score,
    retention_period_days: recording.retention_period_days,
    expiry_time: recording.expiry_time,
    recording_ttl: recording.recording_ttl,
  };
}
