import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { SESSION_ID_MAX_LENGTH, SessionRecordingEntity } from './session-recording.entity.js';

/**
 * One chunk of a recording's rrweb events: the new events of one capture request for one window, sorted by
 * time, stored as gzip-compressed JSON (an array of rrweb events) with their time range.
 */
@Entity('session_recording_snapshots')
@Index('session_recording_snapshots_session_idx', ['teamId', 'sessionId', 'firstTimestamp', 'id'])
export class SessionRecordingSnapshotEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ type: 'integer' })
  teamId: number;

  @Column({ type: 'varchar', length: SESSION_ID_MAX_LENGTH, collation: 'C' })
  sessionId: string;

  @ManyToOne(() => SessionRecordingEntity, { onDelete: 'CASCADE' })
  @JoinColumn([
    { name: 'team_id', referencedColumnName: 'teamId' },
    { name: 'session_id', referencedColumnName: 'sessionId' },
  ])
  recording?: SessionRecordingEntity;

  /** The browser window (tab) the events come from (`$window_id`). */
  @Column({ type: 'varchar', length: SESSION_ID_MAX_LENGTH })
  windowId: string;

  @Column({ type: 'timestamptz' })
  firstTimestamp: Date;

  @Column({ type: 'timestamptz' })
  lastTimestamp: Date;

  @Column({ type: 'integer' })
  eventCount: number;

  /** gzip of the JSON array of the chunk's rrweb events. */
  @Column({ type: 'bytea' })
  data: Buffer;

  @Column({ type: 'timestamptz' })
  createdAt: Date;
}
