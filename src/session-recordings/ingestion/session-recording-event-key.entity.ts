import { Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { SESSION_ID_MAX_LENGTH, SessionRecordingEntity } from '../session-recording.entity.js';

export const EVENT_KEY_MAX_LENGTH = 100;

/**
 * The capture events already ingested for a session, by key: the event's `uuid` when it has one, else
 * `sha256:` + the digest of its window id and snapshot data. Capture inserts the keys of a request with
 * `ON CONFLICT DO NOTHING` and counts only the events whose key was new, so a re-sent request changes nothing.
 */
@Entity('session_recording_event_keys')
export class SessionRecordingEventKeyEntity {
  @PrimaryColumn({ type: 'integer' })
  teamId: number;

  @PrimaryColumn({ type: 'varchar', length: SESSION_ID_MAX_LENGTH, collation: 'C' })
  sessionId: string;

  @PrimaryColumn({ type: 'varchar', length: EVENT_KEY_MAX_LENGTH })
  eventKey: string;

  @ManyToOne(() => SessionRecordingEntity, { onDelete: 'CASCADE' })
  @JoinColumn([
    { name: 'team_id', referencedColumnName: 'teamId' },
    { name: 'session_id', referencedColumnName: 'sessionId' },
  ])
  recording?: SessionRecordingEntity;
}
