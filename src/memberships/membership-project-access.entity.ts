import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { ProjectEntity } from '../projects/project.entity.js';
import { OrganizationMembershipEntity } from './organization-membership.entity.js';

/** Levels of access to a private project (an invite's `private_project_access`). */
export const PROJECT_ACCESS_LEVELS = ['member', 'admin'] as const;
export type ProjectAccessLevel = (typeof PROJECT_ACCESS_LEVELS)[number];

/**
 * Access of a member to one project of the organization, recorded from the `private_project_access` of the
 * invite the member accepted. Projects have no private mode in this service yet, so every member already sees
 * every project of the organization: these rows grant nothing more today; they are the record a private-project
 * feature will read. They go with the membership (a removed member loses them) and with the project.
 */
@Entity('membership_project_access')
@Check('membership_project_access_level_check', `"level" IN ('member', 'admin')`)
@Index('membership_project_access_project_idx', ['projectId'])
export class MembershipProjectAccessEntity {
  @PrimaryColumn({ type: 'uuid' })
  membershipId: string;

  @ManyToOne(() => OrganizationMembershipEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'membership_id' })
  membership?: OrganizationMembershipEntity;

  @PrimaryColumn({ type: 'integer' })
  projectId: number;

  @ManyToOne(() => ProjectEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'project_id' })
  project?: ProjectEntity;

  @Column({ type: 'varchar', length: 8 })
  level: ProjectAccessLevel;
}
