import {
  Column,
  CreateDateColumn,
  Entity,
  Generated,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
} from 'typeorm';
import { ProjectEntity } from '../projects/project.entity.js';

/**
 * A person of a project: the people whose browsers send recordings. Identified by any of its distinct ids
 * (`person_distinct_ids`); created by capture on the first event of an unknown distinct id.
 */
@Entity('persons')
@Index('persons_team_idx', ['teamId', 'id'])
// Batch exports of persons read the persons changed within an interval.
@Index('persons_team_updated_idx', ['teamId', 'updatedAt'])
@Index('persons_team_write_xid_idx', ['teamId', 'writeXid'])
export class PersonEntity {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'uuid', unique: true })
  @Generated('uuid')
  uuid: string;

  @Column({ type: 'integer' })
  teamId: number;

  @ManyToOne(() => ProjectEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'team_id' })
  team?: ProjectEntity;

  /** Free-form person properties (`email`, `name`, …). */
  @Column({ type: 'jsonb', default: {} })
  properties: Record<string, unknown>;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  /** PostHog's `is_identified`: an `$identify` or `$create_alias` linked a second distinct id to the person. */
  @Column({ type: 'boolean', default: false })
  isIdentified: boolean;

  /**
   * Raised by one each time `properties` change (a database trigger, `persons_touch`, whoever writes them):
   * PostHog's `person_version`, which batch exports merge on.
   */
  @Column({ type: 'bigint', default: 0 })
  version: string;

  /** When the person was created or its properties last changed (set by the same trigger). */
  @Column({ type: 'timestamptz', default: () => 'now()' })
  updatedAt: Date;

  /**
   * The transaction id (xid8) of the row's last write, set by the \`export_write_xid\` trigger: what scheduled
   * batch exports read by, so a write that commits late is not missed (docs/batch-exports.md, "Late commits").
   */
  @Column({ type: 'bigint', default: 0, select: false, insert: false, update: false })
  writeXid: string;
}
