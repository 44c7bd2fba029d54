import {
  Check,
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
  PrimaryGeneratedColumn,
} from 'typeorm';
import { ProjectEntity } from '../projects/project.entity.js';
import { RoleEntity } from '../roles/role.entity.js';
import { UserEntity } from '../users/user.entity.js';

/** What a rule matches a recording by: its start URL, or a property of its person. */
export const RULE_KINDS = ['start_url', 'person_property'] as const;
export type RuleKind = (typeof RULE_KINDS)[number];

/** How a person property rule compares the person's property with its value. */
export const RULE_PROPERTY_OPERATORS = ['exact', 'is_not', 'icontains'] as const;
export type RulePropertyOperator = (typeof RULE_PROPERTY_OPERATORS)[number];

/** Longest `url_pattern`, property key and property value. */
export const URL_PATTERN_MAX_LENGTH = 500;
export const PROPERTY_KEY_MAX_LENGTH = 200;
export const PROPERTY_VALUE_MAX_LENGTH = 1000;

/**
 * A rule of a project about who may watch its recordings (docs/recordings.md, "Who may watch"): the recordings
 * it matches — by start URL pattern, or by a property of the recording's person — may be watched only by the
 * members of its roles (`RecordingAccessRuleRoleEntity`) and the organization's admins and owners. The columns
 * of the other kind are null (a check constraint holds it).
 */
@Entity('recording_access_rules')
@Index('recording_access_rules_team_idx', ['teamId', 'createdAt', 'id'])
@Check('recording_access_rules_kind_check', `"kind" IN ('start_url', 'person_property')`)
@Check(
  'recording_access_rules_match_check',
  `("kind" = 'start_url' AND "url_pattern" IS NOT NULL AND "property_key" IS NULL AND "property_operator" IS NULL AND "property_value" IS NULL) OR ` +
    `("kind" = 'person_property' AND "url_pattern" IS NULL AND "property_key" IS NOT NULL AND "property_operator" IN ('exact', 'is_not', 'icontains') AND "property_value" IS NOT NULL)`,
)
export class RecordingAccessRuleEntity {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'recording_access_rules_pkey' })
  id: string;

  @Column({ type: 'integer' })
  teamId: number;

  @ManyToOne(() => ProjectEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'team_id', foreignKeyConstraintName: 'recording_access_rules_team_id_fkey' })
  team?: ProjectEntity;

  @Column({ type: 'varchar', length: 20 })
  kind: RuleKind;

  /** `start_url` rules: a glob (`*` any characters) matched against the whole start URL, ignoring case. */
  @Column({ type: 'varchar', length: URL_PATTERN_MAX_LENGTH, nullable: true })
  urlPattern: string | null;

  @Column({ type: 'varchar', length: PROPERTY_KEY_MAX_LENGTH, nullable: true })
  propertyKey: string | null;

  @Column({ type: 'varchar', length: 16, nullable: true })
  propertyOperator: RulePropertyOperator | null;

  @Column({ type: 'varchar', length: PROPERTY_VALUE_MAX_LENGTH, nullable: true })
  propertyValue: string | null;

  /** The user who created the rule; null once that user is deleted. */
  @Column({ type: 'integer', nullable: true })
  createdById: number | null;

  @ManyToOne(() => UserEntity, { onDelete: 'SET NULL' })
  @JoinColumn({
    name: 'created_by_id',
    foreignKeyConstraintName: 'recording_access_rules_created_by_id_fkey',
  })
  createdBy?: UserEntity | null;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  updatedAt: Date;
}

/**
 * A role a rule lets watch the recordings it matches. It goes with the rule and with the role: a deleted role
 * no longer lets anyone watch (the rule stays, for its other roles and the admins).
 */
@Entity('recording_access_rule_roles')
@Index('recording_access_rule_roles_role_idx', ['roleId'])
export class RecordingAccessRuleRoleEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'recording_access_rule_roles_pkey' })
  ruleId: string;

  @ManyToOne(() => RecordingAccessRuleEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'rule_id', foreignKeyConstraintName: 'recording_access_rule_roles_rule_id_fkey' })
  rule?: RecordingAccessRuleEntity;

  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'recording_access_rule_roles_pkey' })
  roleId: string;

  @ManyToOne(() => RoleEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'role_id', foreignKeyConstraintName: 'recording_access_rule_roles_role_id_fkey' })
  role?: RoleEntity;
}
