import { Column, Entity, JoinColumn, OneToOne, PrimaryColumn } from 'typeorm';
import { ProjectEntity } from '../../projects/project.entity.js';

/**
 * The number of recordings of a project that are not deleted, kept exact by triggers on
 * `session_recordings` (written by hand in the migration): a statement-level trigger per INSERT and DELETE
 * statement (bulk inserts pay once) and a row trigger when `deleted_at` changes. The unfiltered list reads
 * its `count` here instead of counting a million rows.
 */
@Entity('session_recording_counts')
export class SessionRecordingCountEntity {
  @PrimaryColumn({ type: 'integer' })
  teamId: number;

  @OneToOne(() => ProjectEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'team_id' })
  team?: ProjectEntity;

  @Column({ type: 'bigint', default: 0 })
  recordings: string;
}
