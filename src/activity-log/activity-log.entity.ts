import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * One entry of the activity log (PostHog's `ActivityLog`): who (user, key, address) did what (`activity`) to which
 * object (`scope`, `item_id`), with PostHog's `detail` (its `changes`). Written in the transaction of the write it
 * records, never changed (the table's triggers refuse UPDATE and DELETE but the retention task's). The indexes
 * are the migration's (descending keys and partial predicates TypeORM does not declare).
 */
@Entity('activity_logs')
@Index('activity_logs_team_created_idx', { synchronize: false })
@Index('activity_logs_organization_created_idx', { synchronize: false })
@Index('activity_logs_scope_item_idx', { synchronize: false })
@Index('activity_logs_created_idx', { synchronize: false })
@Index('activity_logs_team_write_xid_idx', { synchronize: false })
export class ActivityLogEntity {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'activity_logs_pkey' })
  id: string;

  /** The organization the entry belongs to; null for a user's own objects (their personal API keys). */
  @Column({ type: 'uuid', nullable: true })
  organizationId: string | null;

  /** The project, for entries of a project's objects. */
  @Column({ type: 'integer', nullable: true })
  teamId: number | null;

  /** Who: the user behind the key; null for the system (the CLI, a project secret key). */
  @Column({ type: 'integer', nullable: true })
  userId: number | null;

  /** Which key: a personal API key's id, `project_secret_api_key:<id>`, or null. */
  @Column({ type: 'varchar', length: 100, nullable: true })
  apiKeyId: string | null;

  @Column({ type: 'boolean', default: false })
  isSystem: boolean;

  @Column({ type: 'varchar', length: 64 })
  activity: string;

  @Column({ type: 'varchar', length: 64 })
  scope: string;

  @Column({ type: 'varchar', length: 200, nullable: true })
  itemId: string | null;

  @Column({ type: 'jsonb', default: {} })
  detail: Record<string, unknown>;

  @Column({ type: 'inet', nullable: true })
  ip: string | null;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  /** The inserting transaction's id (`export_write_xid` trigger): what the `activity_log` export reads by. */
  @Column({ type: 'bigint', default: 0, select: false, insert: false, update: false })
  writeXid: string;
}
