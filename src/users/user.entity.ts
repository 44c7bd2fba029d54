import { Column, Generated, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

@Entity('users')
// E-mail addresses are unique regardless of case (see the migration: unique index on lower(email)).
@Index('users_email_lower_key', { synchronize: false })
export class UserEntity {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'uuid', unique: true })
  @Generated('uuid')
  uuid: string;

  @Column({ type: 'varchar', length: 254 })
  email: string;

  @Column({ type: 'varchar', length: 200 })
  distinctId: string;

  @Column({ type: 'varchar', length: 150, default: '' })
  firstName: string;

  @Column({ type: 'varchar', length: 150, default: '' })
  lastName: string;

  @Column({ type: 'boolean', default: false })
  isEmailVerified: boolean;

  @Column({ type: 'jsonb', nullable: true })
  hedgehogConfig: Record<string, unknown> | null;

  /** Last time any of the user's keys authenticated a request (written at most hourly). */
  @Column({ type: 'timestamptz', nullable: true })
  lastLogin: Date | null;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  /**
   * A service account of an organization (src/service-accounts/): no person, a member of that one organization
   * only, acting through keys restricted to it. Set when the user is made, never changed.
   */
  @Column({ type: 'boolean', default: false })
  isServiceAccount: boolean;
}
