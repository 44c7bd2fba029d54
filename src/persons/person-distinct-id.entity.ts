import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { ProjectEntity } from '../projects/project.entity.js';
import { PersonEntity } from './person.entity.js';

export const DISTINCT_ID_MAX_LENGTH = 200;

/**
 * One distinct id of a person. Unique per project, so concurrent first events of one distinct id create one
 * person (the loser of the insert race takes the winner's). The id orders a person's distinct ids by age.
 */
@Entity('person_distinct_ids')
@Index('person_distinct_ids_team_distinct_id_key', ['teamId', 'distinctId'], { unique: true })
@Index('person_distinct_ids_person_idx', ['personId', 'id'])
// Batch exports of persons read the distinct ids added or moved within an interval.
@Index('person_distinct_ids_team_updated_idx', ['teamId', 'updatedAt'])
@Index('person_distinct_ids_team_write_xid_idx', ['teamId', 'writeXid'])
export class PersonDistinctIdEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ type: 'integer' })
  teamId: number;

  @ManyToOne(() => ProjectEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'team_id' })
  team?: ProjectEntity;

  @Column({ type: 'varchar', length: DISTINCT_ID_MAX_LENGTH })
  distinctId: string;

  @Column({ type: 'integer' })
  personId: number;

  @ManyToOne(() => PersonEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'person_id' })
  person?: PersonEntity;

  /** Raised by one each time the distinct id moves to another person (trigger): PostHog's `person_distinct_id_version`. */
  @Column({ type: 'bigint', default: 0 })
  version: string;

  /** When the distinct id was added or last moved (set by the same trigger). */
  @Column({ type: 'timestamptz', default: () => 'now()' })
  updatedAt: Date;

  /**
   * The transaction id (xid8) of the row's last write, set by the \`export_write_xid\` trigger: what scheduled
   * batch exports read by, so a write that commits late is not missed (docs/batch-exports.md, "Late commits").
   */
  @Column({ type: 'bigint', default: 0, select: false, insert: false, update: false })
  writeXid: string;
}
