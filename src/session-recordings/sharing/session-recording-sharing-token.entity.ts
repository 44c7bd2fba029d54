import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { ProjectEntity } from '../../projects/project.entity.js';

/**
 * Which project a sharing token was issued in: one row per token ever issued (`session_recording_sharing`
 * holds each recording's current one). The shared-link route (`GET /api/shared/:access_token`) looks the project
 * up here first, then reads the sharing and the recording naming that project, so on Citus (where this is a
 * reference table and the sharing is distributed by project) the read is routed to the project's shard rather than
 * asked of every shard. It also keeps tokens unique across projects there. A row outlives a rotated token or a
 * deleted recording (the sharing read then finds nothing: 404); it goes with its project.
 */
@Entity('session_recording_sharing_tokens')
export class SessionRecordingSharingTokenEntity {
  @PrimaryColumn({
    type: 'varchar',
    length: 64,
    primaryKeyConstraintName: 'session_recording_sharing_tokens_pkey',
  })
  accessToken: string;

  @Column({ type: 'integer' })
  teamId: number;

  @ManyToOne(() => ProjectEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'team_id', foreignKeyConstraintName: 'session_recording_sharing_tokens_team_id_fkey' })
  team?: ProjectEntity;
}
