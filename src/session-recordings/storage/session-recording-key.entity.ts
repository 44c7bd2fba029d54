import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { SESSION_ID_MAX_LENGTH, SessionRecordingEntity } from '../session-recording.entity.js';

/**
 * The data key of one recording: the AES-256-GCM key its chunks in packed objects are encrypted with, itself
 * encrypted ("wrapped") with the key-encryption key RECORDING_KEY_ENCRYPTION_KEY, so a database dump alone does
 * not open the objects. Created by the packer when it first packs a chunk of a live recording; deleted with the
 * recording (DELETE of the recording deletes it in its transaction, the purge by cascade), which makes the
 * recording's bytes in shared objects unreadable at once without rewriting them (docs/decisions.md §14).
 */
@Entity('session_recording_keys')
export class SessionRecordingKeyEntity {
  @PrimaryColumn({ type: 'integer' })
  teamId: number;

  @PrimaryColumn({ type: 'varchar', length: SESSION_ID_MAX_LENGTH, collation: 'C' })
  sessionId: string;

  @ManyToOne(() => SessionRecordingEntity, { onDelete: 'CASCADE' })
  @JoinColumn([
    { name: 'team_id', referencedColumnName: 'teamId' },
    { name: 'session_id', referencedColumnName: 'sessionId' },
  ])
  recording?: SessionRecordingEntity;

  /** nonce (12 bytes), the data key encrypted with the key-encryption key (32), GCM tag (16). */
  @Column({ type: 'bytea' })
  wrappedKey: Buffer;

  /** Which key-encryption key wrapped it: the first 16 hex digits of a SHA-256 of that key (never the key). */
  @Column({ type: 'varchar', length: 16 })
  kekId: string;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  createdAt: Date;
}
