import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { OrganizationEntity } from '../organizations/organization.entity.js';
import { ProjectEntity } from '../projects/project.entity.js';
import { UserEntity } from '../users/user.entity.js';
import type { Config, DestinationType } from './destinations.js';
import type { IncrementalMode } from './incremental.js';
import type { Interval } from './schedule.js';

export const BATCH_EXPORT_MODELS = ['events', 'persons', 'sessions', 'activity_log'] as const;
export type BatchExportModel = (typeof BATCH_EXPORT_MODELS)[number];

/**
 * A batch export: sends a model of a project to a destination every interval. Deleting is soft (`deleted_at`):
 * the row stays for its runs and logs but is hidden from every read and never scheduled again.
 */
@Entity('batch_exports')
@Index('batch_exports_organization_idx', ['organizationId', 'createdAt', 'id'])
@Check('batch_exports_model_check', `"model" IN ('events', 'persons', 'sessions', 'activity_log')`)
@Check(
  'batch_exports_interval_check',
  `"interval" IN ('hour', 'day', 'week', 'every 5 minutes', 'every 15 minutes')`,
)
@Check(
  'batch_exports_destination_type_check',
  `"destination_type" IN ('S3', 'AwsS3', 'S3Compatible', 'AzureBlob', 'Snowflake', 'Postgres', 'Redshift', 'BigQuery', 'Databricks', 'HTTP', 'NoOp')`,
)
@Check('batch_exports_incremental_mode_check', `"incremental_mode" IN ('APPEND', 'MERGE')`)
@Check(
  'batch_exports_start_before_end_check',
  '"start_at" IS NULL OR "end_at" IS NULL OR "start_at" < "end_at"',
)
@Check(
  'batch_exports_notification_webhook_secret_check',
  '"notification_webhook_url" IS NULL OR "notification_webhook_secret" IS NOT NULL',
)
export class BatchExportEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'uuid' })
  organizationId: string;

  @ManyToOne(() => OrganizationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'organization_id' })
  organization?: OrganizationEntity;

  /** The project exported: the organization's default project at creation. */
  @Column({ type: 'integer' })
  teamId: number;

  @ManyToOne(() => ProjectEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'team_id' })
  team?: ProjectEntity;

  /**
   * The user whose key created the export: the user its runs count against in the workers' fair sharing (null
   * for exports created before it was recorded, or whose user was deleted: the organization's owner then).
   */
  @Column({ type: 'integer', nullable: true })
  createdById: number | null;

  @ManyToOne(() => UserEntity, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'created_by_id' })
  createdBy?: UserEntity;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Column({ type: 'varchar', length: 16 })
  model: BatchExportModel;

  @Column({ type: 'varchar', length: 16 })
  destinationType: DestinationType;

  /** The destination's config without its secrets: what responses show. */
  @Column({ type: 'jsonb', default: {} })
  destinationConfig: Config;

  /** The secret keys of the config. Never selected unless asked for (`select: false`), never returned. */
  @Column({ type: 'jsonb', default: {}, select: false })
  destinationSecrets?: Config;

  @Column({ type: 'varchar', length: 32 })
  interval: Interval;

  /** The IANA time zone whose clock daily and weekly intervals end on (null: UTC). */
  @Column({ type: 'varchar', length: 64, nullable: true })
  timezone: string | null;

  /**
   * Seconds after midnight (day) or after Sunday 00:00 (week) at which intervals end, on the `timezone` clock;
   * null for the default (midnight; Monday midnight). PostHog's `offset_hour` and `offset_day`.
   */
  @Column({ type: 'integer', nullable: true })
  intervalOffset: number | null;

  @Column({ type: 'boolean', default: false })
  paused: boolean;

  @Column({ type: 'timestamptz', nullable: true })
  lastPausedAt: Date | null;

  @Column({ type: 'timestamptz', nullable: true })
  startAt: Date | null;

  @Column({ type: 'timestamptz', nullable: true })
  endAt: Date | null;

  @Column({ type: 'text', default: '' })
  hogqlQuery: string;

  /** PostHog's event filters of the export (JSON, stored and returned); null when none. */
  @Column({ type: 'jsonb', nullable: true })
  filters: unknown;

  /**
   * PostHog's `incremental_mode`: how a table destination takes a run's rows (src/batch-exports/incremental.ts).
   */
  @Column({ type: 'varchar', length: 16, default: 'APPEND' })
  incrementalMode: IncrementalMode;

  /** PostHog's `primary_key`: the columns MERGE keeps one row per; null for the model's own merge key. */
  @Column({ type: 'text', array: true, nullable: true })
  primaryKey: string[] | null;

  /** PostHog's `version_key`: the columns whose greater value replaces a row; null for the model's own. */
  @Column({ type: 'text', array: true, nullable: true })
  versionKey: string[] | null;

  /** PostHog's `destination.integration_id` (stored and returned; integrations are not managed here). */
  @Column({ type: 'integer', nullable: true })
  destinationIntegrationId: number | null;

  /**
   * The scheduler's watermark: every interval ending at or before it has been handled (run created, or skipped
   * as it fell while paused). Null until the first tick that considers the export.
   */
  @Column({ type: 'timestamptz', nullable: true })
  scheduledThrough: Date | null;

  /**
   * Where failed runs and auto-pauses are POSTed, signed with `notificationWebhookSecret` (null: no webhook).
   * See docs/batch-exports.md, "Notifications".
   */
  @Column({ type: 'text', nullable: true })
  notificationWebhookUrl: string | null;

  /** The HMAC-SHA256 key of the webhook's signature: write-only, never selected unless asked for, never returned. */
  @Column({ type: 'text', nullable: true, select: false })
  notificationWebhookSecret?: string | null;

  /**
   * When the admins were last e-mailed about this export's failures (at most one such e-mail a day, on every
   * replica: the claim is an UPDATE of this column).
   */
  @Column({ type: 'timestamptz', nullable: true })
  failureEmailedAt: Date | null;

  /** The end of the newest interval a run completed (the lag metric: how far behind the export is). */
  @Column({ type: 'timestamptz', nullable: true })
  lastCompletedIntervalEnd: Date | null;

  @Column({ type: 'timestamptz' })
  createdAt: Date;

  @Column({ type: 'timestamptz' })
  lastUpdatedAt: Date;

  /** Set by DELETE (soft delete). */
  @Column({ type: 'timestamptz', nullable: true })
  deletedAt: Date | null;
}
