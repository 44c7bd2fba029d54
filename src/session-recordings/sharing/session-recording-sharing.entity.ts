import { Column, Entity, JoinColumn, ManyToOne, OneToOne, PrimaryColumn } from 'typeorm';
import { UserEntity } from '../../users/user.entity.js';
import { SESSION_ID_MAX_LENGTH, SessionRecordingEntity } from '../session-recording.entity.js';

/**
 * The sharing configuration of a recording (docs/decisions.md §10): created on first read, disabled, with a random
 * URL-safe token. `GET /api/shared/:access_token` shows the recording while `enabled`.
 */
@Entity('session_recording_sharing')
export class SessionRecordingSharingEntity {
  @PrimaryColumn({ type: 'integer' })
  teamId: number;

  @PrimaryColumn({ type: 'varchar', length: SESSION_ID_MAX_LENGTH, collation: 'C' })
  sessionId: string;

  @OneToOne(() => SessionRecordingEntity, { onDelete: 'CASCADE' })
  @JoinColumn([
    { name: 'team_id', referencedColumnName: 'teamId' },
    { name: 'session_id', referencedColumnName: 'sessionId' },
  ])
  recording?: SessionRecordingEntity;

  @Column({ type: 'varchar', length: 64, unique: true })
  accessToken: string;

  @Column({ type: 'boolean', default: false })
  enabled: boolean;

  /** Display options of the shared view (PostHog's `settings`); null until set. */
  @Column({ type: 'jsonb', nullable: true })
  settings: Record<string, boolean> | null;

  @Column({ type: 'timestamptz' })
  createdAt: Date;

  /**
   * The user who last enabled sharing or issued the current link: the link shows the recording while the
   * recording access rules let that user watch it (docs/recordings.md, "Who may watch"). Null for links issued
   * before, or once the user is deleted: the link then works only for recordings no rule restricts.
   */
  @Column({ type: 'integer', nullable: true })
  enabledById: number | null;

  @ManyToOne(() => UserEntity, { onDelete: 'SET NULL' })
  @JoinColumn({
    name: 'enabled_by_id',
    foreignKeyConstraintName: 'session_recording_sharing_enabled_by_id_fkey',
  })
  enabledBy?: UserEntity | null;
}
