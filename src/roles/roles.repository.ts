import { Injectable } from '@nestjs/common';
import type { Page, PageParams } from '../common/pagination/page.js';
import { RepositoryBase } from '../database/repository-base.js';
import { RoleEntity } from './role.entity.js';

/**
 * The roles table, owned by this module (docs/data-access.md). Queries go through TypeORM's repository; a
 * query measured hot may become plain SQL behind the same method name, pinned with `@GenerateSql`.
 */
@Injectable()
export class RolesRepository extends RepositoryBase {
  /** A page of the organization's roles, oldest first. */
  async pageForOrganization(
    organizationId: string,
    { limit, offset }: PageParams,
  ): Promise<Page<RoleEntity>> {
    const [items, total] = await this.repository(RoleEntity).findAndCount({
      where: { organizationId },
      order: { createdAt: 'ASC', id: 'ASC' },
      take: limit,
      skip: offset,
    });
    return { items, total };
  }

  /** The role when it belongs to the organization. */
  findInOrganization(organizationId: string, id: string): Promise<RoleEntity | null> {
    return this.repository(RoleEntity).findOne({ where: { id, organizationId } });
  }

  async insert(organizationId: string, name: string): Promise<RoleEntity> {
    const repository = this.repository(RoleEntity);
    return repository.save(repository.create({ organizationId, name }), { transaction: false, reload: true });
  }

  /** Deletes the role when it belongs to the organization; returns whether it did. */
  async delete(organizationId: string, id: string): Promise<boolean> {
    const result = await this.repository(RoleEntity).delete({ id, organizationId });
    return (result.affected ?? 0) > 0;
  }
}
