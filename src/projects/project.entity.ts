import {
  Column,
  Generated,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
} from 'typeorm';
import { OrganizationEntity } from '../organizations/organization.entity.js';

/** A project (PostHog's "team"): the unit recordings belong to. */
@Entity('projects')
@Index('projects_organization_idx', ['organizationId', 'id'])
export class ProjectEntity {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'uuid', unique: true })
  @Generated('uuid')
  uuid: string;

  @Column({ type: 'uuid' })
  organizationId: string;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id' })
  organization?: OrganizationEntity;

  @Column({ type: 'varchar', length: 200 })
  name: string;

  /** The public project token (`phc_…`) browsers send with captured events. */
  @Column({ type: 'varchar', length: 64, unique: true })
  apiToken: string;

  @Column({ type: 'varchar', length: 64, default: 'UTC' })
  timezone: string;

  /**
   * Whether browsers record sessions for this project: the remote config served to the SDK
   * (`/array/:token/config`, `/flags`, `/decide`) enables session recording only when this is on.
   */
  @Column({ type: 'boolean', default: true })
  sessionRecordingOptIn: boolean;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;
}
