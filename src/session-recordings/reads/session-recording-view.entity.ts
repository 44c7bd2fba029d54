import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { UserEntity } from '../../users/user.entity.js';
import { SESSION_ID_MAX_LENGTH, SessionRecordingEntity } from '../session-recording.entity.js';

/** A user has viewed a recording (`viewed` is per user: true while this row exists). */
@Entity('session_recording_views')
@Index('session_recording_views_user_idx', ['userId'])
export class SessionRecordingViewEntity {
  @PrimaryColumn({ type: 'integer' })
  teamId: number;

  @PrimaryColumn({ type: 'varchar', length: SESSION_ID_MAX_LENGTH, collation: 'C' })
  sessionId: string;

  @PrimaryColumn({ type: 'integer' })
  userId: number;

  @ManyToOne(() => SessionRecordingEntity, { onDelete: 'CASCADE' })
  @JoinColumn([
    { name: 'team_id', referencedColumnName: 'teamId' },
    { name: 'session_id', referencedColumnName: 'sessionId' },
  ])
  recording?: SessionRecordingEntity;

  @ManyToOne(() => UserEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id' })
  user?: UserEntity;

  @Column({ type: 'timestamptz' })
  viewedAt: Date;
}
