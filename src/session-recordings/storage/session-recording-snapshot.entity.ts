import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { SESSION_ID_MAX_LENGTH, SessionRecordingEntity } from '../session-recording.entity.js';

/**
 * One chunk of a recording's rrweb events: the new events of one capture request for one window, sorted by
 * time, stored as gzip-compressed JSON (an array of rrweb events) with their time range. Its bytes are in
 * `data`, or in the object `object_key` (all of it, or the range `object_offset`/`object_length` of a packed
 * object), or — neither set — waiting to be packed in `session_recording_chunk_buffer` (the row of the same
 * `snapshot_id` and `created_at`; a table partitioned by hour, with no entity: see the RecordingPackedObjects
 * migration).
 */
@Entity('session_recording_snapshots')
@Index('session_recording_snapshots_session_idx', ['teamId', 'sessionId', 'firstTimestamp', 'id'])
@Check('session_recording_snapshots_encrypted_check', `NOT "encrypted" OR "object_offset" IS NOT NULL`)
@Check(
  'session_recording_snapshots_range_check',
  `("object_offset" IS NULL) = ("object_length" IS NULL) AND ("object_offset" IS NULL OR "object_key" IS NOT NULL)`,
)
@Index('session_recording_snapshots_object_key_idx', ['objectKey'], { where: '"object_key" IS NOT NULL' })
@Index('session_recording_snapshots_buffered_idx', ['id'], {
  where: '"data" IS NULL AND "object_key" IS NULL',
})
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

  /**
   * gzip of the chunk's snapshot lines (JSON lines, one rrweb event each), when the chunk is stored in the
   * database; null when it is an object in the store (`objectKey`).
   */
  @Column({ type: 'bytea', nullable: true })
  data: Buffer | null;

  /** Key of the chunk's object in RECORDING_S3_BUCKET (the same gzip bytes), when it is stored there. */
  @Column({ type: 'varchar', length: 1024, nullable: true })
  objectKey: string | null;

  /**
   * Where the chunk's bytes start in its object when the object is a packed one (many chunks, written by the
   * packer); null when the object is the chunk's own (the per-chunk layout) or the chunk is in the database.
   */
  @Column({ type: 'bigint', nullable: true })
  objectOffset: string | null;

  /** How many bytes of the packed object are the chunk's (with `objectOffset`). */
  @Column({ type: 'integer', nullable: true })
  objectLength: number | null;

  /**
   * Whether the chunk's range of its packed object is encrypted with its recording's data key
   * (`session_recording_keys`): nonce (12 bytes), AES-256-GCM ciphertext of the gzip bytes, tag (16 bytes).
   */
  @Column({ type: 'boolean', default: false })
  encrypted: boolean;

  @Column({ type: 'timestamptz' })
  createdAt: Date;
}
