import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { ProjectEntity } from '../../projects/project.entity.js';
import { SESSION_ID_MAX_LENGTH } from '../session-recording.entity.js';

/**
 * The data key of one recording: the AES-256-GCM key its chunks in packed objects are encrypted with, itself
 * encrypted ("wrapped") with the key-encryption key RECORDING_KEY_ENCRYPTION_KEY, so a database dump alone does
 * not open the objects. Created by the packer when it first packs a chunk of a live recording; deleted with the
 * recording — by DELETE of the recording in its transaction, by the purge in the statement that deletes the
 * recordings, with the project by cascade — which makes the recording's bytes in shared objects unreadable at
 * once without rewriting them (docs/decisions.md §14). Its foreign key is the project's, not the recording's: a
 * cascade from each purged recording would cost a trigger call per row; the purge deletes keys set-based.
 */
@Entity('session_recording_keys')
export class SessionRecordingKeyEntity {
  @PrimaryColumn({ type: 'integer' })
  teamId: number;

  @PrimaryColumn({ type: 'varchar', length: SESSION_ID_MAX_LENGTH, collation: 'C' })
  sessionId: string;

  @ManyToOne(() => ProjectEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'team_id' })
  team?: ProjectEntity;

  /** nonce (12 bytes), the data key encrypted with the key-encryption key (32), GCM tag (16). */
  @Column({ type: 'bytea' })
  wrappedKey: Buffer;

  /** Which key-encryption key wrapped it: the first 16 hex digits of a SHA-256 of that key (never the key). */
  @Column({ type: 'varchar', length: 16 })
  kekId: string;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  createdAt: Date;
}
