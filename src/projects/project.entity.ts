import {
  Check,
  Column,
  Generated,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  UpdateDateColumn,
} from 'typeorm';
import { OrganizationEntity } from '../organizations/organization.entity.js';

/** Bounds of a project's `session_recording_retention_period_days`. */
export const RECORDING_RETENTION_MIN_DAYS = 1;
export const RECORDING_RETENTION_MAX_DAYS = 3650;

/** A project (PostHog's "team"): the unit recordings belong to. */
@Entity('projects')
@Index('projects_organization_idx', ['organizationId', 'id'])
@Index('projects_pending_deletion_idx', ['deletedAt'], { where: '"deleted_at" IS NOT NULL' })
@Check(
  'projects_recording_retention_check',
  `"session_recording_retention_period_days" BETWEEN ${RECORDING_RETENTION_MIN_DAYS} AND ${RECORDING_RETENTION_MAX_DAYS}`,
)
@Check(
  'projects_events_retention_check',
  `"events_retention_period_days" BETWEEN ${RECORDING_RETENTION_MIN_DAYS} AND ${RECORDING_RETENTION_MAX_DAYS}`,
)
@Check(
  'projects_default_experiment_stats_method_check',
  `"default_experiment_stats_method" IN ('bayesian', 'frequentist', '')`,
)
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

  /**
   * The project secret API token (`phs_…`): server SDKs send it instead of a personal API key for local
   * evaluation (`/flags/definitions`). Stored in plain text, as PostHog does: admins and owners read it in the
   * project's answer. `rotate_secret_token` moves it to `secretApiTokenBackup`.
   */
  @Column({ type: 'varchar', length: 64, unique: true })
  secretApiToken: string;

  /** The previous secret token, still accepted until the next rotation; null before the first. */
  @Column({ type: 'varchar', length: 64, nullable: true, unique: true })
  secretApiTokenBackup: string | null;

  @Column({ type: 'varchar', length: 64, default: 'UTC' })
  timezone: string;

  /**
   * Whether browsers record sessions for this project: the remote config served to the SDK
   * (`/array/:token/config`, `/flags`, `/decide`) enables session recording only when this is on.
   */
  @Column({ type: 'boolean', default: true })
  sessionRecordingOptIn: boolean;

  /**
   * Days this project's recordings are kept (from the start of the UTC day each started); null: the service's
   * RECORDING_RETENTION_DAYS. Recordings past it disappear from the API and are purged.
   */
  @Column({ type: 'integer', nullable: true })
  sessionRecordingRetentionPeriodDays: number | null;

  /** Days this project's events are kept; null: the service's EVENTS_RETENTION_DAYS. */
  @Column({ type: 'integer', nullable: true })
  eventsRetentionPeriodDays: number | null;

  /**
   * PostHog's `ingested_event`: the project has stored an analytics event. Set by the insert of the first events
   * (EventsRepository.insertBatch); never unset, also once those events have expired.
   */
  @Column({ type: 'boolean', default: false })
  ingestedEvent: boolean;

  // PostHog's capture settings of a project, served to the SDK in the remote config. `anonymize_ips`: captured
  // events get no `$ip`.
  @Column({ type: 'boolean', default: false })
  anonymizeIps: boolean;

  @Column({ type: 'boolean', default: false })
  autocaptureOptOut: boolean;

  @Column({ type: 'boolean', default: false })
  autocaptureExceptionsOptIn: boolean;

  @Column({ type: 'boolean', default: true })
  captureConsoleLogOptIn: boolean;

  @Column({ type: 'boolean', default: true })
  capturePerformanceOptIn: boolean;

  @Column({ type: 'boolean', default: false })
  heatmapsOptIn: boolean;

  /** PostHog's team setting: stored and returned (no experiments here); `""` and null as PostHog takes them. */
  @Column({ type: 'varchar', length: 20, nullable: true, default: 'bayesian' })
  defaultExperimentStatsMethod: string | null;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  /** When its settings last changed (a project from before this column: its creation). */
  @UpdateDateColumn({ type: 'timestamptz' })
  updatedAt: Date;

  /**
   * When it was deleted (`DELETE /api/projects/:id`); null while it exists. A deleted project is gone from every
   * read at once (ProjectsRepository never returns it); the project deletion task then removes its data and the
   * row (ProjectDeletionService).
   */
  @Column({ type: 'timestamptz', nullable: true })
  deletedAt: Date | null;
}
