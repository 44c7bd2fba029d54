import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { PersonEntity } from '../persons/person.entity.js';
import { ProjectEntity } from '../projects/project.entity.js';

export const SNAPSHOT_SOURCES = ['web', 'mobile'] as const;
export type SnapshotSource = (typeof SNAPSHOT_SOURCES)[number];

/**
 * Most characters of a recording's `start_url`: a longer `href` is cut there (never inside a surrogate pair), so
 * a list page or an export batch of recordings stays small whatever a page's address was. Reads cut older rows
 * the same way.
 */
export const START_URL_MAX_LENGTH = 8192;

/** Longest session and window id accepted by capture (docs/decisions.md §11). */
export const SESSION_ID_MAX_LENGTH = 70;

/**
 * Indexes written by hand in the migration (declared here with `synchronize: false`): TypeORM cannot declare
 * a descending column. They serve the list order `start_time DESC, session_id` and its filters, over the rows
 * that are not deleted.
 */
export const RECORDINGS_LIST_INDEX = 'session_recordings_team_start_idx';
export const RECORDINGS_DISTINCT_ID_INDEX = 'session_recordings_team_distinct_id_start_idx';
export const RECORDINGS_PERSON_INDEX = 'session_recordings_person_start_idx';
/** Listed recordings by project and person: the list filtered by person properties counts them here. */
export const RECORDINGS_TEAM_PERSON_INDEX = 'session_recordings_team_person_start_idx';
/**
 * Listed recordings by project and session id, with their start (INCLUDE): the list filtered by an event probes
 * it with the session ids that had the event (the page's keys and the count from this index alone).
 */
export const RECORDINGS_TEAM_SESSION_INDEX = 'session_recordings_team_session_live_idx';
/** Soft-deleted recordings by project and start: where the purge finds the expired ones. */
export const RECORDINGS_DELETED_INDEX = 'session_recordings_deleted_start_idx';

/**
 * The metadata of one session recording (one browser session of a project), kept up to date by capture:
 * every accepted request adds its counts and widens the time range in one UPDATE (docs/decisions.md §11). The rrweb
 * events themselves are in `session_recording_snapshots`. Deleting is soft (`deleted_at`): the row stays, so
 * later snapshots of the session id are recognised and dropped.
 */
@Entity('session_recordings')
@Index(RECORDINGS_LIST_INDEX, { synchronize: false })
@Index(RECORDINGS_DISTINCT_ID_INDEX, { synchronize: false })
@Index(RECORDINGS_PERSON_INDEX, { synchronize: false })
@Index(RECORDINGS_DELETED_INDEX, { synchronize: false })
@Index(RECORDINGS_TEAM_PERSON_INDEX, { synchronize: false })
@Index(RECORDINGS_TEAM_SESSION_INDEX, { synchronize: false })
// Batch exports of sessions read the recordings that received events within an interval, in this order.
@Index('session_recordings_team_received_idx', ['teamId', 'lastEventReceivedAt', 'sessionId'])
@Index('session_recordings_team_write_xid_idx', ['teamId', 'writeXid'])
@Check('session_recordings_snapshot_source_check', `"snapshot_source" IN ('web', 'mobile')`)
export class SessionRecordingEntity {
  @PrimaryColumn({ type: 'integer' })
  teamId: number;

  @ManyToOne(() => ProjectEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'team_id' })
  team?: ProjectEntity;

  /**
   * The session id sent by the browser (`$session_id`): the recording's `id`. Collation "C" (byte order): the
   * list's tie-breaker sorts the same everywhere, and compares fast.
   */
  @PrimaryColumn({ type: 'varchar', length: SESSION_ID_MAX_LENGTH, collation: 'C' })
  sessionId: string;

  /** The distinct id of the first accepted request of the session. */
  @Column({ type: 'varchar', length: 200 })
  distinctId: string;

  @Column({ type: 'integer', nullable: true })
  personId: number | null;

  @ManyToOne(() => PersonEntity, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'person_id' })
  person?: PersonEntity;

  /** Earliest rrweb event timestamp of the session. */
  @Column({ type: 'timestamptz' })
  startTime: Date;

  /** Latest rrweb event timestamp of the session. */
  @Column({ type: 'timestamptz' })
  endTime: Date;

  @Column({ type: 'integer', default: 0 })
  clickCount: number;

  @Column({ type: 'integer', default: 0 })
  keypressCount: number;

  @Column({ type: 'integer', default: 0 })
  mouseActivityCount: number;

  @Column({ type: 'integer', default: 0 })
  consoleLogCount: number;

  @Column({ type: 'integer', default: 0 })
  consoleWarnCount: number;

  @Column({ type: 'integer', default: 0 })
  consoleErrorCount: number;

  /** Sum of the active segments of every request, in milliseconds (`active_seconds` = this / 1000). */
  @Column({ type: 'bigint', default: 0 })
  activeMs: string;

  /** Number of rrweb events stored for the session. */
  @Column({ type: 'integer', default: 0 })
  eventCount: number;

  /** Bytes of the stored snapshots (their uncompressed JSON lines), held under RECORDING_SESSION_MAX_BYTES. */
  @Column({ type: 'bigint', default: 0 })
  snapshotBytes: string;

  /** `href` of the earliest event carrying one, and that event's timestamp (to compare across requests). */
  @Column({ type: 'text', nullable: true })
  startUrl: string | null;

  @Column({ type: 'timestamptz', nullable: true })
  startUrlTime: Date | null;

  @Column({ type: 'varchar', length: 8, default: 'web' })
  snapshotSource: SnapshotSource;

  @Column({ type: 'timestamptz' })
  createdAt: Date;

  /** When the service last accepted new events of the session: `ongoing` while less than 5 minutes ago. */
  @Column({ type: 'timestamptz' })
  lastEventReceivedAt: Date;

  /** Set by DELETE (soft delete). Soft-deleted rows are purged with the others once expired. */
  @Column({ type: 'timestamptz', nullable: true })
  deletedAt: Date | null;

  /**
   * Raised by one on every write that changes the row (trigger \`session_recordings_touch\`): the version the
   * sessions export carries, so a destination replaces its row whenever an exported field changed.
   */
  @Column({ type: 'bigint', default: 1, select: false, insert: false, update: false })
  version: string;

  /**
   * The transaction id (xid8) of the row's last write, set by the \`export_write_xid\` trigger: what scheduled
   * batch exports read by, so a write that commits late is not missed (docs/batch-exports.md, "Late commits").
   */
  @Column({ type: 'bigint', default: 0, select: false, insert: false, update: false })
  writeXid: string;
}
