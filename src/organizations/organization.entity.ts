import { Check, Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

@Entity('organizations')
@Check('organizations_plugins_access_level_check', '"plugins_access_level" IN (0, 3, 6, 9)')
export class OrganizationEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'varchar', length: 64 })
  name: string;

  @Column({ type: 'varchar', length: 48, unique: true })
  slug: string;

  @Column({ type: 'uuid', nullable: true })
  logoMediaId: string | null;

  @Column({ type: 'smallint', default: 9 })
  pluginsAccessLevel: number;

  @Column({ type: 'jsonb', default: [] })
  availableProductFeatures: unknown[];

  @Column({ type: 'boolean', default: true })
  isMemberJoinEmailEnabled: boolean;

  @Column({ name: 'enforce_2fa', type: 'boolean', default: false })
  enforce2fa: boolean;

  @Column({ type: 'varchar', length: 200, nullable: true })
  customerId: string | null;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updatedAt: Date;
}
