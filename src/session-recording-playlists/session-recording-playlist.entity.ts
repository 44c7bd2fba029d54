import {
  Column,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
  PrimaryGeneratedColumn,
  Unique,
} from 'typeorm';
import { ProjectEntity } from '../projects/project.entity.js';
import {
  SESSION_ID_MAX_LENGTH,
  SessionRecordingEntity,
} from '../session-recordings/session-recording.entity.js';
import { UserEntity } from '../users/user.entity.js';

/** The unique constraint that keeps a `short_id` to one playlist of a project. */
export const PLAYLIST_SHORT_ID_CONSTRAINT = 'session_recording_playlists_team_short_id_key';

/**
 * A saved view of a project's recordings (PostHog's session recording playlist): a name, the list filters it
 * applies (stored as sent), and the recordings pinned to it (`session_recording_playlist_items`). Deleting is
 * soft (`deleted`), as in PostHog: the row stays, hidden from the API.
 */
@Entity('session_recording_playlists')
@Unique(PLAYLIST_SHORT_ID_CONSTRAINT, ['teamId', 'shortId'])
@Index('session_recording_playlists_team_modified_idx', ['teamId', 'lastModifiedAt'])
export class SessionRecordingPlaylistEntity {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'integer' })
  teamId: number;

  @ManyToOne(() => ProjectEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'team_id' })
  team?: ProjectEntity;

  /** What the API and the replay page address the playlist by. Collation "C": compared byte for byte. */
  @Column({ type: 'varchar', length: 12, collation: 'C' })
  shortId: string;

  @Column({ type: 'varchar', length: 400, nullable: true })
  name: string | null;

  @Column({ type: 'varchar', length: 400, nullable: true })
  derivedName: string | null;

  @Column({ type: 'text', default: '' })
  description: string;

  @Column({ type: 'boolean', default: false })
  pinned: boolean;

  @Column({ type: 'boolean', default: false })
  deleted: boolean;

  /** The saved list filters, a JSON object stored as sent (bounded by PLAYLIST_FILTERS_MAX_BYTES). */
  @Column({ type: 'jsonb', default: () => "'{}'" })
  filters: Record<string, unknown>;

  @Column({ type: 'integer', nullable: true })
  createdById: number | null;

  @ManyToOne(() => UserEntity, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'created_by_id' })
  createdBy?: UserEntity | null;

  @Column({ type: 'timestamptz' })
  createdAt: Date;

  @Column({ type: 'integer', nullable: true })
  lastModifiedById: number | null;

  @ManyToOne(() => UserEntity, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'last_modified_by_id' })
  lastModifiedBy?: UserEntity | null;

  @Column({ type: 'timestamptz' })
  lastModifiedAt: Date;
}

/**
 * A recording pinned to a playlist. It goes with the recording when the purge deletes it, and with the
 * playlist's project.
 */
@Entity('session_recording_playlist_items')
@Index('session_recording_playlist_items_recording_idx', ['teamId', 'sessionId'])
export class SessionRecordingPlaylistItemEntity {
  @PrimaryColumn({ type: 'integer' })
  playlistId: number;

  @ManyToOne(() => SessionRecordingPlaylistEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'playlist_id' })
  playlist?: SessionRecordingPlaylistEntity;

  @PrimaryColumn({ type: 'varchar', length: SESSION_ID_MAX_LENGTH, collation: 'C' })
  sessionId: string;

  @Column({ type: 'integer' })
  teamId: number;

  @ManyToOne(() => SessionRecordingEntity, { onDelete: 'CASCADE' })
  @JoinColumn([
    { name: 'team_id', referencedColumnName: 'teamId' },
    { name: 'session_id', referencedColumnName: 'sessionId' },
  ])
  recording?: SessionRecordingEntity;

  @Column({ type: 'timestamptz' })
  addedAt: Date;
}
