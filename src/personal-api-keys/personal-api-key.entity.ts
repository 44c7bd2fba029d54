import {
  Check,
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
} from 'typeorm';
import { UserEntity } from '../users/user.entity.js';

/** A personal API key. Only the SHA-256 digest of the secret is stored. */
@Entity('personal_api_keys')
@Index('personal_api_keys_user_idx', ['userId'])
@Check('personal_api_keys_scopes_check', 'cardinality("scopes") > 0')
export class PersonalApiKeyEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'integer' })
  userId: number;

  @ManyToOne(() => UserEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id' })
  user?: UserEntity;

  @Column({ type: 'varchar', length: 40, default: '' })
  label: string;

  /** Hex SHA-256 of the secret. */
  @Column({ type: 'char', length: 64, unique: true })
  secureValue: string;

  /** `phx_...abcd`: the last four characters, for recognising a key in lists. */
  @Column({ type: 'varchar', length: 16 })
  maskValue: string;

  @Column({ type: 'text', array: true })
  scopes: string[];

  @Column({ type: 'uuid', array: true, nullable: true })
  scopedOrganizations: string[] | null;

  @Column({ type: 'integer', array: true, nullable: true })
  scopedTeams: number[] | null;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  @Column({ type: 'timestamptz', nullable: true })
  lastUsedAt: Date | null;

  @Column({ type: 'timestamptz', nullable: true })
  revokedAt: Date | null;
}
