import {
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
} from 'typeorm';
import { ProjectEntity } from '../projects/project.entity.js';

/** A recording access rule of a project. */
@Entity('recording_access_rules')
@Index('recording_access_rules_project_idx', ['projectId', 'createdAt'])
export class RecordingAccessRuleEntity {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'recording_access_rules_pkey' })
  id: string;

  @Column({ type: 'integer' })
  projectId: number;

  @ManyToOne(() => ProjectEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'project_id', foreignKeyConstraintName: 'recording_access_rules_project_id_fkey' })
  project?: ProjectEntity;

  @Column({ type: 'varchar', length: 200 })
  name: string;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;
}
